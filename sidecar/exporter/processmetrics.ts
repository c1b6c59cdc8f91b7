import { readdirSync } from 'node:fs';
import { renderLabels, sampleLine, type RenderedFamily } from './exposition.js';

const startTimeSeconds = Math.round(Date.now() / 1000 - process.uptime());

function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/**
 * Process metrics under the names prom-client's defaults use (process_*, nodejs_*), computed
 * directly: prom-client's full default set costs about a millisecond per scrape, which is a third
 * of the cached-scrape budget, for series nobody alerts on.
 */
export function processFamilies(constantLabels: ReadonlyArray<readonly [string, string]>): RenderedFamily[] {
  const labels = renderLabels(constantLabels);
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  const family = (name: string, type: 'gauge' | 'counter', help: string, value: number): RenderedFamily => ({ name, type, help, lines: [sampleLine(name, labels, value)] });
  const families = [
    family('process_cpu_user_seconds_total', 'counter', 'Total user CPU time spent in seconds.', cpu.user / 1e6),
    family('process_cpu_system_seconds_total', 'counter', 'Total system CPU time spent in seconds.', cpu.system / 1e6),
    family('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.', (cpu.user + cpu.system) / 1e6),
    family('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', startTimeSeconds),
    family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', memory.rss),
    family('nodejs_heap_size_total_bytes', 'gauge', 'Process heap size from Node.js in bytes.', memory.heapTotal),
    family('nodejs_heap_size_used_bytes', 'gauge', 'Process heap size used from Node.js in bytes.', memory.heapUsed),
    family('nodejs_external_memory_bytes', 'gauge', 'Node.js external memory size in bytes.', memory.external),
  ];
  const fds = openFds();
  if (fds !== undefined) families.push(family('process_open_fds', 'gauge', 'Number of open file descriptors.', fds));
  return families;
}
