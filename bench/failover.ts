/**
 * ha-node failover benchmark (not a test). Three ha-node members with PostgreSQL 15 on the API
 * server stand-in, ttl=10 s, loop_wait=2 s. Five runs each of:
 *  - crash: kill -9 of the primary pod's processes (ha-node, postmaster, fencer) → time to the
 *    first successful INSERT on the new primary;
 *  - clean hand-over: SIGTERM to the primary ha-node (clean stop, lease released) → the longest
 *    gap between two acknowledged INSERTs of a writer that follows the primary.
 * The harness plays the kubelet: a killed member's container is reported terminated
 * KUBELET_DELAY_MS (default 1000) after the kill, which enables early takeover (ADR 0404);
 * KUBELET_DELAY_MS=-1 measures pure lease expiry.
 * Run: node --import tsx bench/failover.ts   (RUNS=5, TTL=10, LOOP_WAIT=2, KUBELET_DELAY_MS=1000)
 */
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from '../test/sidecar/ha-node/harness.js';
import { crashPhases, formatHandOver, formatPhases, handOverPhases, type CrashPhases, type HandOverPhases } from './failover-phases.js';

const runs = Number(process.env.RUNS ?? 5);
const ttl = Number(process.env.TTL ?? 10);
const loopWait = Number(process.env.LOOP_WAIT ?? 2);
/** How long the harness's kubelet takes to report a dead container; negative: no pod status (lease expiry only). */
const kubeletDelayMs = Number(process.env.KUBELET_DELAY_MS ?? 1000);

async function tryInsert(member: Member): Promise<boolean> {
  const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 500, query_timeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const rows = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    if (rows.rows[0]?.r !== false) return false;
    await client.query('INSERT INTO bench_writes VALUES (now())');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function writeAnywhere(members: Member[]): Promise<boolean> {
  const results = await Promise.all(members.map(tryInsert));
  return results.some(Boolean);
}

async function settle(cluster: TestCluster): Promise<Member> {
  const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
  await cluster.waitFor(
    'two streaming replicas',
    async () => {
      const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
      return codes.filter((c) => c === 200).length === 2;
    },
    120_000,
  );
  return primary;
}

/** The leader lease's last renewTime (epoch ms), read just before the kill. */
async function lastRenew(cluster: TestCluster): Promise<number | undefined> {
  const lease = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`);
  const renew = lease?.spec?.renewTime;
  return renew ? new Date(renew).getTime() : undefined;
}

async function crashRun(cluster: TestCluster): Promise<{ seconds: number; phases: CrashPhases }> {
  const primary = await settle(cluster);
  const others = cluster.members.filter((m) => m !== primary);
  const renewedAt = await lastRenew(cluster);
  const killedEpoch = Date.now();
  const killedAt = performance.now();
  primary.killPod();
  let winner: Member | undefined;
  while (!winner) {
    const results = await Promise.all(others.map(tryInsert));
    winner = others.find((_, i) => results[i]);
    if (!winner) await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - killedAt) / 1000;
  // The winner logs its race once promotion is through (after the first write may succeed).
  const won = winner;
  await cluster
    .waitFor(
      'the race logged',
      async () => won.log().lastIndexOf('won the leader race') > -1 && crashPhases(won.log(), killedEpoch, renewedAt, ttl).race !== undefined,
      10_000,
    )
    .catch(() => undefined);
  const phases = crashPhases(winner.log(), killedEpoch, renewedAt, ttl);
  primary.start();
  return { seconds, phases };
}

async function handOverRun(cluster: TestCluster): Promise<{ seconds: number; phases: HandOverPhases }> {
  const primary = await settle(cluster);
  let lastOk = Date.now();
  let maxGap = 0;
  let gapStart = 0;
  let gapEnd = 0;
  let running = true;
  const writer = (async () => {
    while (running) {
      if (await writeAnywhere(cluster.members)) {
        const now = Date.now();
        if (now - lastOk > maxGap) [maxGap, gapStart, gapEnd] = [now - lastOk, lastOk, now];
        lastOk = now;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  const stopped = primary.stop();
  const others = cluster.members.filter((m) => m !== primary);
  const winner = await cluster.waitFor(
    'a new primary',
    async () => {
      for (const m of others) if ((await m.status('/primary')) === 200) return m;
      return undefined;
    },
    60_000,
  );
  await new Promise((r) => setTimeout(r, 1500));
  running = false;
  await writer;
  await stopped;
  const phases = handOverPhases(primary.log(), winner.log(), gapStart, gapEnd);
  primary.start();
  return { seconds: maxGap / 1000, phases };
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `min ${sorted[0]!.toFixed(2)}  median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}  max ${sorted.at(-1)!.toFixed(2)}`;
}

// Debug lines carry the loop's wake reasons the phase breakdown needs.
process.env.HA_TEST_LOG_LEVEL ??= 'debug';
const cluster = await startCluster({ members: 3, ttl, loopWait, retryTimeout: 4, scope: 'bench', kubeletDelayMs });
try {
  const primary = await settle(cluster);
  await primary.query('CREATE TABLE bench_writes (at timestamptz)');
  const crash: number[] = [];
  const phases: CrashPhases[] = [];
  const handOverSteps: HandOverPhases[] = [];
  const handOver: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const run = await crashRun(cluster);
    crash.push(run.seconds);
    phases.push(run.phases);
    process.stderr.write(`crash run ${i + 1}: ${run.seconds.toFixed(2)} s  (${formatPhases(run.phases)})\n`);
  }
  for (let i = 0; i < runs; i += 1) {
    const run = await handOverRun(cluster);
    handOver.push(run.seconds);
    handOverSteps.push(run.phases);
    process.stderr.write(`hand-over run ${i + 1}: ${run.seconds.toFixed(2)} s  (${formatHandOver(run.phases)})\n`);
  }
  const kubeletText = kubeletDelayMs >= 0 ? `kubelet reports after ${kubeletDelayMs} ms` : 'no kubelet status (lease expiry only)';
  console.log(`\nha-node failover, 3 members, ttl=${ttl} s, loop_wait=${loopWait} s, ${kubeletText}, stand-in API server, PostgreSQL 15\n`);
  console.log('run | crash: kill -9 → first write on new primary (s) | clean stop: write gap (s)');
  console.log('----|-----------------------------------------------|--------------------------');
  for (let i = 0; i < runs; i += 1)
    console.log(`${String(i + 1).padStart(3)} | ${crash[i]!.toFixed(2).padStart(45)} | ${handOver[i]!.toFixed(2).padStart(24)}`);
  console.log('\ncrash phases, seconds from the kill (race and promote are durations):');
  for (let i = 0; i < runs; i += 1) console.log(`${String(i + 1).padStart(3)} | ${formatPhases(phases[i]!)}`);
  console.log('\nclean hand-over, seconds from the last write on the old primary:');
  for (let i = 0; i < runs; i += 1) console.log(`${String(i + 1).padStart(3)} | ${formatHandOver(handOverSteps[i]!)}`);
  console.log(`\ncrash:     ${summary(crash)}   (target ≤ 10 s worst case)`);
  console.log(`hand-over: ${summary(handOver)}   (target ≤ 1 s write gap)`);
} finally {
  await cluster.stop();
}
