/**
 * Planned switchover through the pooler vs straight to the primary (not run in CI): a 2-member
 * cluster (real ha-node processes, PostgreSQL 15, Lease DCS on the stand-in) with a real
 * `keelson pooler` (PgBouncer) registered with ha-node. In each run two clients insert every 20 ms
 * during the same POST /switchover: one through the pooler, one connected to the primary directly
 * that reconnects to whichever member answers /primary (what a -rw client sees once the Service
 * follows). Prints per run failed inserts and the longest gap between acknowledged inserts.
 *
 *   node --import tsx bench/pooler-switchover.ts        (BENCH_RUNS=5)
 */
import { rmSync } from 'node:fs';
import pg from 'pg';
import { callMember } from '../sidecar/ha-node/ctl/client.js';
import { startCluster, type Member, type TestCluster } from '../test/sidecar/ha-node/harness.js';
import { settled } from '../test/sidecar/ha-node/traffic.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from '../test/sidecar/pooler/support.js';
import { freePort } from '../test/support/ports.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const credentials = { username: 'keelson', password: 'bench-api-secret' };
const user = 'benchapp';
const password = 'benchapp-secret';

interface Tally {
  acks: number;
  failures: number;
  longestGapMs: number;
}

/** Inserts every 20 ms on the client `connect` gives, reconnecting after an error. */
function insertLoop(connect: () => Promise<pg.Client>): { stop(): Promise<Tally> } {
  const tally: Tally = { acks: 0, failures: 0, longestGapMs: 0 };
  let running = true;
  const done = (async () => {
    let client: pg.Client | undefined;
    let lastAck = performance.now();
    while (running) {
      try {
        client ??= await connect();
        await client.query('INSERT INTO bench_ticks DEFAULT VALUES');
        const now = performance.now();
        tally.longestGapMs = Math.max(tally.longestGapMs, now - lastAck);
        lastAck = now;
        tally.acks += 1;
      } catch {
        tally.failures += 1;
        void client?.end().catch(() => undefined);
        client = undefined;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await client?.end().catch(() => undefined);
  })();
  return {
    async stop() {
      running = false;
      await done;
      return tally;
    },
  };
}

async function appClient(host: string, port: number): Promise<pg.Client> {
  const client = new pg.Client({ host, port, user, password, database: 'app', connectionTimeoutMillis: 1000, query_timeout: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function main(): Promise<void> {
  const dir = scratchDir();
  const controlPort = await freePort('127.0.0.1');
  const passwordFile = poolerPasswordFile(dir, 'bench-pooler-secret');
  const cluster: TestCluster = await startCluster({
    members: 2,
    ttl: 8,
    loopWait: 1,
    retryTimeout: 2,
    scope: 'poolbench',
    env: { KEELSON_API_USERNAME: credentials.username, KEELSON_API_PASSWORD: credentials.password, KEELSON_POOLERS: `127.0.0.1:${controlPort}`, KEELSON_POOLER_PASSWORD_FILE: passwordFile },
  });
  let pooler: TestPooler | undefined;
  try {
    let primary: Member = await settled(cluster, 1);
    await cluster.waitFor('the pooler role', async () => (await primary.query("SELECT 1 FROM pg_roles WHERE rolname = 'keelson_pooler'")).length === 1, 60_000);
    await primary.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
    const admin = new pg.Client({ connectionString: primary.pgUrl.replace(/\/postgres$/, '/app') });
    await admin.connect();
    await admin.query(`CREATE TABLE bench_ticks (id bigserial PRIMARY KEY); GRANT ALL ON bench_ticks, bench_ticks_id_seq TO ${user}`);
    await admin.end();
    pooler = await startTestPooler({ baseDir: dir, target: { host: primary.ip, port: primary.pgPort }, passwordFile, credentials, controlPort });
    const rows: string[] = [];
    for (let run = 1; run <= runs; run += 1) {
      primary = await settled(cluster, 1);
      const candidate = cluster.members.find((m) => m !== primary)!;
      const viaPooler = insertLoop(() => appClient(pooler!.host, pooler!.port));
      const direct = insertLoop(async () => {
        const current = await cluster.primary();
        if (!current) throw new Error('no primary');
        return appClient(current.ip, current.pgPort);
      });
      await new Promise((r) => setTimeout(r, 500));
      const reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, { credentials, timeoutMs: 40_000 });
      await new Promise((r) => setTimeout(r, 3000));
      const [p, d] = await Promise.all([viaPooler.stop(), direct.stop()]);
      rows.push(`| ${run} | ${reply.status} | ${p.failures} | ${Math.round(p.longestGapMs)} | ${d.failures} | ${Math.round(d.longestGapMs)} |`);
      process.stdout.write(`${rows.at(-1)}\n`);
    }
    process.stdout.write(['', '| run | switchover | failed via pooler | longest gap via pooler (ms) | failed direct | longest gap direct (ms) |', '|---|---|---|---|---|---|', ...rows, ''].join('\n'));
  } finally {
    await pooler?.running.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
