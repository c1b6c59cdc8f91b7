/**
 * Planned switchover through the pooler vs straight to the primary (not run in CI): a 2-member
 * cluster (real ha-node processes, PostgreSQL 15, Lease DCS on the stand-in) with a real
 * `keelson pooler` (PgBouncer) registered with ha-node. In each run two clients insert every 20 ms
 * during the same POST /switchover: one through the pooler, one connected to the primary directly
 * that reconnects to whichever member answers /primary (what a -rw client sees once the Service
 * follows). Prints per run failed inserts and the longest gap between acknowledged inserts.
 * Then, in the same run, pooler overhead: pgbench select-only (4 clients, BENCH_PGBENCH_SECONDS
 * each) through the pooler and straight to the primary, in alternating order. Each run also
 * gives the switchover's phases from the two ha-node logs (see pooler-phases.ts) and the machine's
 * load average.
 *
 *   node --import tsx bench/pooler-switchover.ts        (BENCH_RUNS=5)
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from '../test/sidecar/ha-node/harness.js';
import { settled } from '../test/sidecar/ha-node/traffic.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from '../test/sidecar/pooler/support.js';
import { freePort } from '../test/support/ports.js';
import { insertLoop, requestSwitchover } from './switchover-traffic.js';
import { phaseCells, phaseColumns, switchoverPhases } from './pooler-phases.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const pgbenchSeconds = Number(process.env.BENCH_PGBENCH_SECONDS ?? 5);
const run_ = promisify(execFile);

/** pgbench select-only for pgbenchSeconds; transactions per second (without connection time). */
async function selectOnlyTps(host: string, port: number): Promise<number> {
  const { stdout } = await run_(
    'pgbench',
    ['-h', host, '-p', String(port), '-U', user, '-n', '-S', '-T', String(pgbenchSeconds), '-c', '4', '-j', '2', 'app'],
    {
      env: { ...process.env, PGPASSWORD: password },
      timeout: (pgbenchSeconds + 30) * 1000,
    },
  );
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
  if (!tps) throw new Error(`no tps in pgbench output: ${stdout}`);
  return Number(tps[1]);
}
const credentials = { username: 'keelson', password: 'bench-api-secret' };
const user = 'benchapp';
const password = 'benchapp-secret';

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
    env: {
      KEELSON_API_USERNAME: credentials.username,
      KEELSON_API_PASSWORD: credentials.password,
      KEELSON_POOLERS: `127.0.0.1:${controlPort}`,
      KEELSON_POOLER_PASSWORD_FILE: passwordFile,
    },
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
    // pgbench's tables (scale 1), readable by the application role.
    await run_('pgbench', ['-i', '-s', '1', '-q', primary.pgUrl.replace(/\/postgres$/, '/app')], { timeout: 120_000 });
    const grant = new pg.Client({ connectionString: primary.pgUrl.replace(/\/postgres$/, '/app') });
    await grant.connect();
    await grant.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${user}`);
    await grant.end();
    pooler = await startTestPooler({ baseDir: dir, target: { host: primary.ip, port: primary.pgPort }, passwordFile, credentials, controlPort });
    const rows: string[] = [];
    for (let run = 1; run <= runs; run += 1) {
      primary = await settled(cluster, 1);
      const candidate = cluster.members.find((m) => m !== primary)!;
      const logFrom = { old: primary.log().length, candidate: candidate.log().length };
      const viaPooler = insertLoop(() => appClient(pooler!.host, pooler!.port));
      const direct = insertLoop(async () => {
        const current = await cluster.primary();
        if (!current) throw new Error('no primary');
        return appClient(current.ip, current.pgPort);
      });
      await new Promise((r) => setTimeout(r, 500));
      const reply = await requestSwitchover(primary, candidate, credentials);
      await new Promise((r) => setTimeout(r, 3000));
      const [p, d] = await Promise.all([viaPooler.stop(), direct.stop()]);
      const phases = switchoverPhases(primary.log().slice(logFrom.old), candidate.log().slice(logFrom.candidate));
      // Pooler overhead on the new primary, alternating which side goes first.
      const now = await settled(cluster, 1);
      await cluster.waitFor('the pooler on the new primary', async () => (await pooler!.running.control.state()).target.port === now.pgPort, 20_000);
      const order = run % 2 === 1 ? ['pooler', 'direct'] : ['direct', 'pooler'];
      const tps: Record<string, number> = {};
      for (const side of order) tps[side] = side === 'pooler' ? await selectOnlyTps(pooler.host, pooler.port) : await selectOnlyTps(now.ip, now.pgPort);
      const ratio = tps.pooler! / tps.direct!;
      const cells = [
        run,
        reply.status,
        p.failures,
        Math.round(p.longestGapMs),
        d.failures,
        Math.round(d.longestGapMs),
        ...phaseCells(phases),
        Math.round(tps.pooler!),
        Math.round(tps.direct!),
        ratio.toFixed(2),
        loadavg()[0]!.toFixed(1),
      ];
      rows.push(`| ${cells.join(' | ')} |`);
      process.stdout.write(`${rows.at(-1)}\n`);
    }
    process.stdout.write(
      [
        '',
        `| run | switchover | failed via pooler | longest gap via pooler (ms) | failed direct | longest gap direct (ms) | ${phaseColumns.map((c) => `${c} (ms)`).join(' | ')} | select-only tps via pooler | tps direct | pooler/direct | load (1 min) |`,
        `|${'---|'.repeat(18)}`,
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    await pooler?.running.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
