/**
 * Fault soak of the HA loop (not a test): three ha-node members with PostgreSQL on the API server
 * stand-in, in asynchronous and synchronous mode. Each round applies one fault to the primary
 * (kill -9 of ha-node, of the postmaster, of the whole pod; SIGSTOP of ha-node or the postmaster
 * past ttl; the primary cut from the API server past ttl; a switchover) while a writer inserts
 * through the pods labelled primary (the -rw selector) and records every acknowledged commit, and
 * a sampler asks every member every 50 ms whether it takes writes. Per fault and mode it prints:
 * rounds, split-brain instants (overlapping writable samples of two members), acknowledged
 * commits missing afterwards, the longest write gap (p50/max), and the time a pod labelled
 * primary was read-only while another member was writable (stale -rw backend).
 * Modes: async, sync (synchronous_mode), failsafe (async with failsafe_mode: an API cut of the
 * primary must then cost no failover). Columns also count failovers (a round whose primary changed),
 * fencer stops of a lease holder ("heartbeat overdue: stopping PostgreSQL" in a member's log), and
 * for the health-checked postmaster kill how long /primary still said 200.
 * --load N starts N CPU burners first and waits until the 1-minute load reaches 10 (2 cores), so
 * the safety figures are taken on a loaded machine; the table then gives the load seen.
 * Run: node --import tsx bench/fault-soak.ts [--rounds N] [--modes async,sync,failsafe] [--faults a,b] [--load N]
 *   (TTL=8 LOOP_WAIT=1 RETRY_TIMEOUT=3)
 */
import { parseArgs } from 'node:util';
import { startCluster, type Member, type TestCluster } from '../test/sidecar/ha-node/harness.js';
import { overlappingWriters, sampleWriters } from '../test/sidecar/ha-node/writable-sampler.js';
import { loadAverage, startBurner, waitForLoad, type Burner } from './cpu-burner.js';
import { faults, type FaultContext } from './fault-soak-faults.js';
import { AckedWriter, PrimaryLabels, StaleRouting } from './fault-soak-traffic.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '1' },
    modes: { type: 'string', default: 'async,sync' },
    faults: { type: 'string' },
    load: { type: 'string', default: '0' },
  },
});
const burners = Number(args.load);
if (!Number.isInteger(burners) || burners < 0) throw new Error(`--load: a number of CPU burners, not ${args.load}`);
const rounds = Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a positive integer, not ${args.rounds}`);
const modes = args.modes!.split(',');
for (const mode of modes) if (!['async', 'sync', 'failsafe'].includes(mode)) throw new Error(`--modes: async, sync and/or failsafe, not ${mode}`);
const chosen = args.faults ? args.faults.split(',') : Object.keys(faults);
for (const name of chosen) if (!faults[name]) throw new Error(`--faults: one of ${Object.keys(faults).join(', ')}; not ${name}`);
const ttl = Number(process.env.TTL ?? 8);
const credentials = { user: 'soak', password: 'soak-password' };
const authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;

interface RoundResult {
  mode: string;
  fault: string;
  splitInstants: number;
  lost: number;
  acked: number;
  gapMs: number;
  staleMs: number;
  recovered: boolean;
  failover: boolean;
  fencerStops: number;
  healthLagMs?: number;
}

const fencerStop = 'heartbeat overdue: stopping PostgreSQL';

/** Fencer stops logged by any member since `since` (epoch ms). */
function fencerStopsSince(cluster: TestCluster, since: number): number {
  let stops = 0;
  for (const member of cluster.members) {
    for (const line of member.log().split('\n')) {
      if (!line.includes(fencerStop)) continue;
      const time = /"time":"([^"]+)"/.exec(line)?.[1] ?? /"time":(\d+)/.exec(line)?.[1];
      const at = time === undefined ? 0 : /^\d+$/.test(time) ? Number(time) : Date.parse(time);
      if (at >= since) stops += 1;
    }
  }
  return stops;
}

async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value as T;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

/** One primary and two streaming replicas. */
async function healthy(cluster: TestCluster, timeoutMs = 120_000): Promise<Member | undefined> {
  return waitFor(async () => {
    const primary = await cluster.primary();
    if (!primary) return undefined;
    const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
    return codes.filter((c) => c === 200).length === 2 ? primary : undefined;
  }, timeoutMs);
}

async function missing(primary: Member, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await primary.query<{ n: string }>('SELECT count(*) AS n FROM soak WHERE id = ANY($1::int[])', [ids]);
  return ids.length - Number(rows[0]!.n);
}

async function round(cluster: TestCluster, mode: string, fault: string, labels: PrimaryLabels, writer: AckedWriter): Promise<RoundResult> {
  const primary = await healthy(cluster);
  if (!primary) return { mode, fault, splitInstants: 0, lost: 0, acked: 0, gapMs: 0, staleMs: 0, recovered: false, failover: false, fencerStops: 0 };
  await waitFor(async () => labels.labelled.length === 1 && labels.labelled[0] === primary.name, 15_000);
  const sampler = sampleWriters(cluster.members);
  const routing = new StaleRouting(cluster.members, labels);
  const from = Date.now();
  const ackedBefore = writer.acked.length;
  await new Promise((r) => setTimeout(r, 1500));
  const context: FaultContext = { cluster, primary, ttl, authorization };
  await faults[fault]!(context);
  const next = await healthy(cluster, 90_000);
  // Writes through the labels again, and a little steady state after.
  await waitFor(async () => writer.acked.at(-1)!.at > Date.now() - 500, 30_000);
  await new Promise((r) => setTimeout(r, 2000));
  const to = Date.now();
  const staleMs = await routing.stop();
  const { writable } = await sampler.stop();
  const ids = writer.acked.slice(ackedBefore).map((a) => a.id);
  // The primary may still be settling (a restart after the round): ask until it answers.
  const lost = next ? ((await waitFor(async () => ({ n: await missing(next, ids) }), 30_000))?.n ?? -1) : -1;
  return {
    mode,
    fault,
    splitInstants: overlappingWriters(writable).length,
    lost,
    acked: ids.length,
    gapMs: writer.longestGap(from, to),
    staleMs,
    recovered: next !== undefined,
    failover: next !== undefined && next.name !== primary.name && fault !== 'switchover',
    fencerStops: fencerStopsSince(cluster, from),
    healthLagMs: context.healthLagMs,
  };
}

async function runMode(mode: string): Promise<RoundResult[]> {
  const env: Record<string, string> = { KEELSON_API_USERNAME: credentials.user, KEELSON_API_PASSWORD: credentials.password };
  if (mode === 'sync') env.KEELSON_SYNCHRONOUS_MODE = 'true';
  if (mode === 'failsafe') env.KEELSON_FAILSAFE_MODE = 'true';
  const cluster = await startCluster({
    members: 3,
    scope: `soak-${mode}`,
    ttl,
    loopWait: Number(process.env.LOOP_WAIT ?? 1),
    retryTimeout: Number(process.env.RETRY_TIMEOUT ?? 3),
    env,
  });
  const results: RoundResult[] = [];
  const labels = new PrimaryLabels(cluster);
  let writer: AckedWriter | undefined;
  try {
    const first = await healthy(cluster, 180_000);
    if (!first) throw new Error(`${mode}: the cluster never became healthy`);
    await first.query('CREATE TABLE soak (id int PRIMARY KEY, at timestamptz DEFAULT now())');
    writer = new AckedWriter(cluster.members, labels);
    for (let r = 1; r <= rounds; r += 1) {
      for (const fault of chosen) {
        const result = await round(cluster, mode, fault, labels, writer).catch((error: Error): RoundResult => {
          process.stdout.write(`${mode} ${fault} #${r}: ${error.message}\n`);
          return { mode, fault, splitInstants: 0, lost: -1, acked: 0, gapMs: 0, staleMs: 0, recovered: false, failover: false, fencerStops: 0 };
        });
        results.push(result);
        process.stdout.write(
          `${mode} ${fault} #${r}: split ${result.splitInstants}, lost ${result.lost}/${result.acked}, gap ${result.gapMs} ms, stale -rw ${result.staleMs} ms, failover ${result.failover ? 'yes' : 'no'}, fencer stops ${result.fencerStops}${result.healthLagMs === undefined ? '' : `, /primary 200 for ${result.healthLagMs} ms after the kill`}, load ${loadAverage().toFixed(1)}${result.recovered ? '' : ' (NOT RECOVERED within 90 s)'}\n`,
        );
        if (!result.recovered) return results;
      }
    }
  } finally {
    await writer?.stop();
    await labels.stop();
    await cluster.stop();
  }
  return results;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? 0;
}

function table(results: RoundResult[]): string {
  const header = [
    'mode',
    'fault',
    'rounds',
    'split instants',
    'lost/acked',
    'write gap p50/max ms',
    'stale -rw total/max ms',
    'failovers',
    'fencer stops',
    '/primary 200 after kill max ms',
    'recovered ≤ 90 s',
  ];
  const rows: string[][] = [];
  for (const mode of modes) {
    for (const fault of chosen) {
      const of = results.filter((r) => r.mode === mode && r.fault === fault);
      if (of.length === 0) continue;
      const sum = (f: (r: RoundResult) => number) => of.reduce((s, r) => s + f(r), 0);
      const lags = of.map((r) => r.healthLagMs).filter((v): v is number => v !== undefined);
      rows.push([
        mode,
        fault,
        String(of.length),
        String(sum((r) => r.splitInstants)),
        `${sum((r) => Math.max(0, r.lost))}/${sum((r) => r.acked)}`,
        `${percentile(
          of.map((r) => r.gapMs),
          0.5,
        )}/${Math.max(...of.map((r) => r.gapMs))}`,
        `${sum((r) => r.staleMs)}/${Math.max(...of.map((r) => r.staleMs))}`,
        String(of.filter((r) => r.failover).length),
        String(sum((r) => r.fencerStops)),
        lags.length > 0 ? String(Math.max(...lags)) : '-',
        `${Math.round((100 * of.filter((r) => r.recovered).length) / of.length)} %`,
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

let burner: Burner | undefined;
if (burners > 0) {
  burner = startBurner(burners);
  process.stdout.write(`${burners} CPU burners started; 1-minute load ${(await waitForLoad(10)).toFixed(1)}\n`);
}
const results: RoundResult[] = [];
try {
  for (const mode of modes) results.push(...(await runMode(mode)));
} finally {
  burner?.stop();
}
const loads = burner?.loads() ?? [];
const loadNote = loads.length > 0 ? `, ${burners} CPU burners, 1-minute load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : ', no burner';
process.stdout.write(`\nfault soak: ttl ${ttl} s, ${rounds} round(s) per fault and mode${loadNote}\n${table(results)}\n`);
