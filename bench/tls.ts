/**
 * TLS benchmark (not a test): the same PostgreSQL 15, in the same run, reached with TLS as
 * Keelson's members and clients do (verify-full against the cluster CA, certificates from
 * lib/tls-certificates.ts served through sidecar/ha-node/postgres/server-tls.ts) and in plaintext.
 * Prints pgbench select-only throughput and the new-connection latency (pgbench -C), direct and
 * through PgBouncer (one pooler with the cluster's TLS files, one without), rounds interleaved so
 * the machine's load hits every variant alike. Then the switchover client gap through a plaintext
 * and a TLS pooler in the same switchovers (tls-switchover.ts).
 * Run: node --import tsx bench/tls.ts   (ROUNDS=3, SECONDS=10, CLIENTS=4, SCALE=10, SWITCHOVERS=5;
 * PARTS=switchover for the switchover part alone)
 */
import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../lib/log.js';
import { createCertificateAuthority, issueCertificate } from '../lib/tls-certificates.js';
import { renderValue } from '../sidecar/ha-node/postgres/conf.js';
import { ServerTls } from '../sidecar/ha-node/postgres/server-tls.js';
import pgLib from 'pg';
import { PoolerRoleKeeper } from '../sidecar/ha-node/postgres/pooler-role.js';
import { pgBin, startPostgres } from '../test/support/postgres.js';
import { poolerPasswordFile, scratchDir, startTestPooler } from '../test/sidecar/pooler/support.js';
import { switchoverGaps } from './tls-switchover.js';

const run = promisify(execFile);
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 10);
const clients = Number(process.env.CLIENTS ?? 4);
const scale = Number(process.env.SCALE ?? 10);
const switchovers = Number(process.env.SWITCHOVERS ?? 5);
const serverName = 'bench-0.bench-headless.default.svc';

interface Figures {
  tps: number;
  connectMs?: number;
}

function parse(output: string): Figures {
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1]);
  const connect = /average connection time = ([\d.]+) ms/.exec(output)?.[1];
  return { tps, ...(connect ? { connectMs: Number(connect) } : {}) };
}

const modeNames = ['plaintext', 'tls', 'pooler plaintext', 'pooler TLS'] as const;
type Mode = (typeof modeNames)[number];

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function throughput(): Promise<void> {
  const pg = await startPostgres({ start: false, settings: { max_connections: 100 } });
  try {
    const ca = createCertificateAuthority('bench.default.keelson.io');
    const mounted = join(pg.baseDir, 'mounted');
    mkdirSync(mounted);
    const server = issueCertificate(ca, 'bench-rw', { usage: 'server', hosts: ['*.bench-headless.default.svc', 'bench-pooler-rw.default.svc'] });
    writeFileSync(join(mounted, 'tls.crt'), server.cert);
    writeFileSync(join(mounted, 'tls.key'), server.key);
    writeFileSync(join(mounted, 'ca.crt'), ca.cert);
    writeFileSync(join(mounted, 'client-ca.crt'), ca.cert);
    const tls = new ServerTls(
      { serverDir: mounted, targetDir: join(pg.baseDir, 'tls'), ...(pg.runAs ? { runAs: pg.runAs } : {}) },
      createLogger({ name: 'bench-tls', level: 'silent' }),
    );
    if (tls.install() !== 'installed') throw new Error('TLS files not installed');
    appendFileSync(
      join(pg.dataDir, 'postgresql.conf'),
      Object.entries(tls.parameters())
        .map(([k, v]) => `${k} = ${renderValue(v)}`)
        .join('\n') + '\n',
    );
    await pg.start();
    const base = { ...process.env, PGPASSWORD: pg.password, PGUSER: pg.superuser, PGPORT: String(pg.port), PGDATABASE: 'postgres' };
    await run(join(pgBin, 'pgbench'), ['-i', '-q', '-s', String(scale)], { env: { ...base, PGHOST: pg.host, PGSSLMODE: 'disable' } });
    // Through PgBouncer as an application role (never the superuser), found with auth_query.
    const poolerDir = scratchDir();
    const passwordFile = poolerPasswordFile(poolerDir, 'pooler-secret');
    await new PoolerRoleKeeper(passwordFile, createLogger({ name: 'bench-tls', level: 'silent' })).ensure(async (database) => {
      const client = new pgLib.Client({ connectionString: pg.urlFor(database) });
      await client.connect();
      return client;
    }, 'bench');
    await pg.query("CREATE ROLE bencher LOGIN PASSWORD 'bencher-secret'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO bencher");
    const target = { host: pg.host, port: pg.port };
    const plainPooler = await startTestPooler({ baseDir: poolerDir, target, passwordFile });
    const tlsPooler = await startTestPooler({ baseDir: poolerDir, target, passwordFile, tlsDir: mounted });
    const viaPooler = { ...process.env, PGPASSWORD: 'bencher-secret', PGUSER: 'bencher', PGDATABASE: 'postgres' };
    const modes: Record<Mode, NodeJS.ProcessEnv> = {
      plaintext: { ...base, PGHOST: pg.host, PGSSLMODE: 'disable' },
      tls: { ...base, PGHOST: serverName, PGHOSTADDR: pg.host, PGSSLMODE: 'verify-full', PGSSLROOTCERT: join(mounted, 'ca.crt') },
      'pooler plaintext': { ...viaPooler, PGHOST: plainPooler.host, PGPORT: String(plainPooler.port), PGSSLMODE: 'disable' },
      'pooler TLS': {
        ...viaPooler,
        PGHOST: 'bench-pooler-rw.default.svc',
        PGHOSTADDR: tlsPooler.host,
        PGPORT: String(tlsPooler.port),
        PGSSLMODE: 'verify-full',
        PGSSLROOTCERT: join(mounted, 'ca.crt'),
      },
    };
    const pgbench = async (env: NodeJS.ProcessEnv, extra: string[]) =>
      parse((await run(join(pgBin, 'pgbench'), ['-S', '-n', '-T', String(seconds), ...extra], { env })).stdout);
    const results = Object.fromEntries(
      modeNames.map((mode) => [mode, { tps: [] as number[], connectTps: [] as number[], connectMs: [] as number[] }]),
    ) as Record<Mode, { tps: number[]; connectTps: number[]; connectMs: number[] }>;
    const loads: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      for (const mode of round % 2 === 0 ? modeNames : [...modeNames].reverse()) {
        loads.push(loadavg()[0]!);
        results[mode].tps.push((await pgbench(modes[mode], ['-c', String(clients), '-j', String(Math.min(clients, 2))])).tps);
        const connecting = await pgbench(modes[mode], ['-C', '-c', '1']);
        results[mode].connectTps.push(connecting.tps);
        results[mode].connectMs.push(connecting.connectMs ?? Number.NaN);
      }
    }
    await plainPooler.running.close();
    await tlsPooler.running.close();
    console.log(
      `\nPostgreSQL 15 and PgBouncer 1.18, select-only, ${clients} clients, scale ${scale}, ${rounds} rounds of ${seconds} s (medians; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)})`,
    );
    console.log(`${''.padEnd(52)} ${'plaintext'.padStart(10)} ${'TLS'.padStart(10)} ${'ratio'.padStart(7)}`);
    for (const [label, plain, tls] of [
      ['direct', 'plaintext', 'tls'],
      ['through the pooler', 'pooler plaintext', 'pooler TLS'],
    ] as const) {
      const row = (what: string, pick: (r: (typeof results)[Mode]) => number[], digits: number) =>
        `${`${label}: ${what}`.padEnd(52)} ${median(pick(results[plain])).toFixed(digits).padStart(10)} ${median(pick(results[tls])).toFixed(digits).padStart(10)} ${(median(pick(results[tls])) / median(pick(results[plain]))).toFixed(2).padStart(7)}`;
      console.log(row('select-only tps', (r) => r.tps, 0));
      console.log(row('tps, a new connection each (-C)', (r) => r.connectTps, 0));
      console.log(row('new connection, ms', (r) => r.connectMs, 2));
    }
    console.log(`rounds (tps): ${modeNames.map((mode) => `${mode} ${results[mode].tps.map((v) => v.toFixed(0)).join('/')}`).join(', ')}`);
  } finally {
    await pg.stop();
  }
}

if (process.env.PARTS !== 'switchover') await throughput();
if (switchovers > 0) await switchoverGaps(switchovers);
