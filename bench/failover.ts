/**
 * ha-node failover benchmark (not a test). Three ha-node members with PostgreSQL 15 on the API
 * server stand-in, ttl=10 s, loop_wait=2 s. Five runs each of:
 *  - crash: kill -9 of the primary pod's processes (ha-node, postmaster, fencer) → time to the
 *    first successful INSERT on the new primary;
 *  - clean hand-over: SIGTERM to the primary ha-node (clean stop, lease released) → the longest
 *    gap between two acknowledged INSERTs of a writer that follows the primary.
 * Run: node --import tsx bench/failover.ts   (RUNS=5, TTL=10, LOOP_WAIT=2)
 */
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from '../test/sidecar/ha-node/harness.js';

const runs = Number(process.env.RUNS ?? 5);
const ttl = Number(process.env.TTL ?? 10);
const loopWait = Number(process.env.LOOP_WAIT ?? 2);

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
  await cluster.waitFor('two streaming replicas', async () => {
    const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
    return codes.filter((c) => c === 200).length === 2;
  }, 120_000);
  return primary;
}

async function crashRun(cluster: TestCluster): Promise<number> {
  const primary = await settle(cluster);
  const others = cluster.members.filter((m) => m !== primary);
  const killedAt = performance.now();
  primary.killPod();
  for (;;) {
    if (await writeAnywhere(others)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - killedAt) / 1000;
  primary.start();
  return seconds;
}

async function handOverRun(cluster: TestCluster): Promise<number> {
  const primary = await settle(cluster);
  let lastOk = performance.now();
  let maxGap = 0;
  let running = true;
  const writer = (async () => {
    while (running) {
      if (await writeAnywhere(cluster.members)) {
        const now = performance.now();
        maxGap = Math.max(maxGap, now - lastOk);
        lastOk = now;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  const stopped = primary.stop();
  const others = cluster.members.filter((m) => m !== primary);
  await cluster.waitFor('a new primary', async () => {
    for (const m of others) if ((await m.status('/primary')) === 200) return true;
    return false;
  }, 60_000);
  await new Promise((r) => setTimeout(r, 1500));
  running = false;
  await writer;
  await stopped;
  primary.start();
  return maxGap / 1000;
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `min ${sorted[0]!.toFixed(2)}  median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}  max ${sorted.at(-1)!.toFixed(2)}`;
}

const cluster = await startCluster({ members: 3, ttl, loopWait, retryTimeout: 4, scope: 'bench' });
try {
  const primary = await settle(cluster);
  await primary.query('CREATE TABLE bench_writes (at timestamptz)');
  const crash: number[] = [];
  const handOver: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    crash.push(await crashRun(cluster));
    process.stderr.write(`crash run ${i + 1}: ${crash.at(-1)!.toFixed(2)} s\n`);
  }
  for (let i = 0; i < runs; i += 1) {
    handOver.push(await handOverRun(cluster));
    process.stderr.write(`hand-over run ${i + 1}: ${handOver.at(-1)!.toFixed(2)} s\n`);
  }
  console.log(`\nha-node failover, 3 members, ttl=${ttl} s, loop_wait=${loopWait} s, stand-in API server, PostgreSQL 15\n`);
  console.log('run | crash: kill -9 → first write on new primary (s) | clean stop: write gap (s)');
  console.log('----|-----------------------------------------------|--------------------------');
  for (let i = 0; i < runs; i += 1) console.log(`${String(i + 1).padStart(3)} | ${crash[i]!.toFixed(2).padStart(45)} | ${handOver[i]!.toFixed(2).padStart(24)}`);
  console.log(`\ncrash:     ${summary(crash)}   (target ≤ 10 s worst case)`);
  console.log(`hand-over: ${summary(handOver)}   (target ≤ 1 s write gap)`);
} finally {
  await cluster.stop();
}
