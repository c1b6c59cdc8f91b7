/** The fleet benchmark's result rows and their Markdown table (pure). */

export interface Row {
  clusters: number;
  ownedMs?: number;
  healthyMs?: number;
  getsPerCluster: number;
  listsPerResync: number;
  /** Of those, LISTs naming the version seen (served from the API server's watch cache). */
  listsAtVersionPerResync: number;
  writesPerResync: number;
  /** Calls to ha-node (HTTP to the members, not the API server) per idle pass. */
  haNodeCallsPerPass: number;
  reconcilesPerResync: number;
  latencies: number[];
  missed: number;
  rssMiB: number;
  idleCpuMsPerSecPerCluster: number;
}

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : NaN;
}

export function formatTable(header: string, rows: Row[], timeoutMs: number): string {
  const seconds = (ms: number | undefined) => (ms === undefined ? `>${timeoutMs / 1000} s` : `${(ms / 1000).toFixed(1)} s`);
  const lines = [
    `\n${header}\n`,
    '| clusters | all owned objects | all Healthy | GETs per cluster per idle resync | LISTs per idle resync (from the watch cache) | writes per idle resync | ha-node calls per idle pass | passes per resync | spec change p50 | p99 | missed (>60 s) | operator RSS | idle CPU per cluster |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.clusters} | ${seconds(r.ownedMs)} | ${seconds(r.healthyMs)} | ${r.getsPerCluster.toFixed(2)} | ${r.listsPerResync.toFixed(1)} (${r.listsAtVersionPerResync.toFixed(1)}) | ${r.writesPerResync.toFixed(1)} | ${r.haNodeCallsPerPass.toFixed(2)} | ${r.reconcilesPerResync.toFixed(0)} | ${(quantile(r.latencies, 0.5) / 1000).toFixed(2)} s | ${(quantile(r.latencies, 0.99) / 1000).toFixed(2)} s (n=${r.latencies.length}) | ${r.missed} | ${r.rssMiB.toFixed(0)} MiB | ${r.idleCpuMsPerSecPerCluster.toFixed(3)} ms/s |`,
    );
  }
  return lines.join('\n');
}
