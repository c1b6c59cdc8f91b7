/**
 * Standby cluster benchmark (not a test). Two ha-node clusters with PostgreSQL 15 on one API
 * server stand-in: a primary cluster and its standby cluster (MEMBERS each, default 2). Each run:
 *  - lag: pgbench (-c 4, DURATION s, default 15) on the primary while the standby leader's replay
 *    position is sampled every 200 ms: bytes behind the primary's WAL position, and the
 *    primary's own replay_lag for the standby leader (pg_stat_replication);
 *  - swap: the controlled swap of the two clusters under a writer recording acknowledged
 *    commits: the longest gap between two acknowledged INSERTs, and commits lost (must be 0).
 * The roles alternate, so run 2 swaps back. Target: write gap of a swap ≤ 2 s.
 * Run: node --import tsx bench/standby.ts   (RUNS=5, DURATION=15, MEMBERS=2)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { AckRecorder } from '../test/sidecar/ha-node/ack-recorder.js';
import { startCluster, superPassword, type Member, type TestCluster } from '../test/sidecar/ha-node/harness.js';
import { controlledSwap, standbyApiEnv, standbyLeaderOf, walPosition } from '../test/sidecar/ha-node/standby-support.js';

const runs = Number(process.env.RUNS ?? 5);
const durationSeconds = Number(process.env.DURATION ?? 15);
const members = Number(process.env.MEMBERS ?? 2);
const pgBin = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

function pgbench(member: Member, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(pgBin, 'pgbench'), ['-h', member.ip, '-p', String(member.pgPort), '-U', 'postgres', ...args, 'postgres'], {
      env: { ...process.env, PGPASSWORD: superPassword },
      stdio: 'ignore',
    });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pgbench ${args.join(' ')} exited ${code}`))));
  });
}

interface LagRun {
  maxBytes: number;
  p95Bytes: number;
  maxReplayLagMs: number;
  samples: number;
}

async function measureLag(primary: Member, standbyLeader: Member): Promise<LagRun> {
  const load = pgbench(primary, ['-c', '4', '-j', '2', '-T', String(durationSeconds), '-n']);
  let loading = true;
  void load.finally(() => (loading = false));
  const bytes: number[] = [];
  let maxReplayLagMs = 0;
  while (loading) {
    // Both at once: asking one after the other would count the time between the two as lag (or hide it).
    const [[head], replayed] = await Promise.all([
      primary.query<{ lsn: string; lag: string | null }>(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn, (SELECT extract(epoch FROM replay_lag) * 1000 FROM pg_stat_replication WHERE application_name = $1)::text AS lag",
        [standbyLeader.name],
      ),
      walPosition(standbyLeader),
    ]);
    bytes.push(Math.max(0, Number(head?.lsn) - replayed));
    maxReplayLagMs = Math.max(maxReplayLagMs, Number(head?.lag ?? 0));
    await new Promise((r) => setTimeout(r, 200));
  }
  await load;
  const sorted = [...bytes].sort((a, b) => a - b);
  return { maxBytes: sorted.at(-1) ?? 0, p95Bytes: sorted[Math.floor(sorted.length * 0.95)] ?? 0, maxReplayLagMs, samples: bytes.length };
}

async function swapUnderWriter(
  all: Member[],
  primary: Member,
  standbyLeader: Member,
  table: string,
  cluster: TestCluster,
): Promise<{ gapMs: number; acked: number; lost: number }> {
  await primary.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
  await cluster.waitFor(
    `${table} on the standby leader`,
    async () => (await standbyLeader.query(`SELECT 1 FROM pg_class WHERE relname = '${table}'`)).length === 1,
    30_000,
  );
  const writer = new AckRecorder(all, table);
  await cluster.waitFor('writes before the swap', async () => writer.acked.length >= 20, 30_000);
  await controlledSwap(primary, standbyLeader, cluster.waitFor);
  const atPromotion = writer.acked.length;
  await cluster.waitFor('writes after the swap', async () => writer.acked.length >= atPromotion + 20, 60_000);
  const acked = await writer.stop();
  const present = new Set((await standbyLeader.query<{ id: number }>(`SELECT id FROM ${table}`)).map((r) => r.id));
  return { gapMs: writer.longestGapMs(), acked: acked.length, lost: acked.filter((id) => !present.has(id)).length };
}

const a = await startCluster({ members, ttl: 10, loopWait: 2, retryTimeout: 4, scope: 'bsa', env: standbyApiEnv });
let b: TestCluster | undefined;
try {
  let primary = await a.waitFor('the primary of bsa', () => a.primary(), 120_000);
  await pgbench(primary, ['-i', '-s', '5', '-q']);
  const bootstrap = { standby_cluster: { host: primary.ip, port: primary.pgPort } };
  b = await startCluster({
    members,
    ttl: 10,
    loopWait: 2,
    retryTimeout: 4,
    scope: 'bsb',
    api: a.api,
    env: { ...standbyApiEnv, KEELSON_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap) },
  });
  const standbyCluster = b;
  let standbyLeader = await b.waitFor('the standby leader of bsb', () => standbyLeaderOf(standbyCluster.members), 300_000);
  const all = [...a.members, ...b.members];
  const lags: LagRun[] = [];
  const swaps: { gapMs: number; acked: number; lost: number }[] = [];
  for (let i = 0; i < runs; i += 1) {
    const lag = await measureLag(primary, standbyLeader);
    lags.push(lag);
    const swap = await swapUnderWriter(all, primary, standbyLeader, `swap_${i + 1}`, a);
    swaps.push(swap);
    process.stderr.write(`run ${i + 1}: lag max ${lag.maxBytes} B, swap gap ${swap.gapMs.toFixed(0)} ms, lost ${swap.lost}\n`);
    [primary, standbyLeader] = [standbyLeader, primary];
    // The demoted cluster's replicas follow its standby leader; wait until it streams from the new primary.
    await a.waitFor(
      'the new standby leader streaming',
      async () => (await standbyLeader.query<{ status: string }>('SELECT status FROM pg_stat_wal_receiver'))[0]?.status === 'streaming',
      60_000,
    );
  }
  console.log(
    `\nstandby clusters, ${members} members each, ttl=10 s, loop_wait=2 s, pgbench -c 4 for ${durationSeconds} s, stand-in API server, PostgreSQL 15\n`,
  );
  console.log('run | lag samples | lag p95 (bytes) | lag max (bytes) | replay_lag max (ms) | swap write gap (ms) | acked | lost');
  console.log('----|-------------|-----------------|-----------------|---------------------|---------------------|-------|-----');
  for (let i = 0; i < runs; i += 1) {
    const lag = lags[i]!;
    const swap = swaps[i]!;
    console.log(
      `${String(i + 1).padStart(3)} | ${String(lag.samples).padStart(11)} | ${String(lag.p95Bytes).padStart(15)} | ${String(lag.maxBytes).padStart(15)} | ${lag.maxReplayLagMs.toFixed(0).padStart(19)} | ${swap.gapMs.toFixed(0).padStart(19)} | ${String(swap.acked).padStart(5)} | ${String(swap.lost).padStart(4)}`,
    );
  }
  const gaps = swaps.map((s) => s.gapMs).sort((x, y) => x - y);
  console.log(
    `\nswap write gap: min ${gaps[0]!.toFixed(0)} ms, median ${gaps[Math.floor(gaps.length / 2)]!.toFixed(0)} ms, max ${gaps.at(-1)!.toFixed(0)} ms (target ≤ 2000 ms); lost commits: ${swaps.reduce((n, s) => n + s.lost, 0)}`,
  );
} finally {
  await b?.stop();
  await a.stop();
}
