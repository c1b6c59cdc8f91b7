/**
 * Admin backend benchmark (not run in CI): a bare express handler, GET /api/v1/auth/user-info and
 * POST /api/v1/system-manage/users/search with a valid token, and login, each with autocannon.
 * Prints requests/s, p50 and p99 latency and the ratio to the bare handler.
 *
 *   node --import tsx bench/admin.ts        (BENCH_SECONDS=10, BENCH_CONNECTIONS=50)
 *
 * The servers (bare express and admin, with their own PostgreSQL and Redis) run in a child process
 * so autocannon does not share their event loop.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { loadAdminConfig } from '../admin/config.js';
import { startAdmin } from '../admin/server.js';
import { serve } from '../lib/http.js';
import { createLogger } from '../lib/log.js';
import { startPostgres } from '../test/support/postgres.js';
import { startRedis } from '../test/support/redis.js';

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const password = 'bench-password-1';

async function measure(name: string, options: Record<string, unknown>, check?: (body: string) => boolean): Promise<{ name: string } & AutocannonResult> {
  if (check) {
    const probe = await fetch(options.url as string, { method: (options.method as string) ?? 'GET', headers: options.headers as Record<string, string>, body: options.body as string | undefined });
    const text = await probe.text();
    if (!check(text)) throw new Error(`${name}: unexpected response ${text.slice(0, 200)}`);
  }
  await autocannon({ connections, duration: 1, ...options }); // warm-up: JIT, pools, caches
  const result = await autocannon({ connections, duration: seconds, ...options });
  return { name, ...result };
}

interface Targets {
  bare: string;
  admin: string;
  superToken: string;
  userToken: string;
}

/** Child mode: start everything, print the targets as one JSON line, stop on SIGTERM. */
async function serveTargets(): Promise<void> {
  const pg = await startPostgres({ settings: { max_connections: 100 } });
  const redis = await startRedis();
  const logger = createLogger({ name: 'admin', level: 'warn' });
  const bareApp = express();
  bareApp.get('/bare', (_req, res) => {
    res.json({ code: '0000', msg: 'OK', data: null });
  });
  const bare = await serve(bareApp, { host: '127.0.0.1', port: 0, logger });
  const config = loadAdminConfig(
    { listen: '127.0.0.1:0', databaseUrl: pg.url, redisUrl: redis.url },
    { ...process.env, SECRET_KEY: 'keelson-benchmark-secret-key-0123456789', ADMIN_INITIAL_PASSWORD: password, LOGIN_RATE_LIMIT_PER_ADDRESS: '100000000', LOGIN_RATE_LIMIT_PER_USER: '100000000' },
  );
  const admin = await startAdmin(config, logger);
  const stop = async (): Promise<void> => {
    await admin.close().catch(() => undefined);
    await bare.close();
    await redis.stop();
    await pg.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  const loginAs = async (userName: string): Promise<string> =>
    ((await (await fetch(`${admin.server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userName, password }) })).json()) as { data: { token: string } }).data.token;
  // A non-super user, so requests go through the full API permission check.
  const hash = await admin.services.passwords.hash(password);
  const { rows } = await admin.services.db.query<{ id: number }>(`INSERT INTO users (user_name, password) VALUES ('bench-admin', $1) RETURNING id`, [hash]);
  await admin.services.db.query(`INSERT INTO user_roles SELECT $1, id FROM roles WHERE role_code = 'R_ADMIN'`, [rows[0].id]);
  await admin.services.db.query(`INSERT INTO users (user_name, password) SELECT 'user' || g, 'x' FROM generate_series(1, 200) g`);
  const targets: Targets = { bare: bare.url, admin: admin.server.url, superToken: await loginAs('admin'), userToken: await loginAs('bench-admin') };
  process.stdout.write(`${JSON.stringify(targets)}\n`);
}

async function runBenchmarks(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited ${code}`)));
    });
    const t = JSON.parse(line) as Targets;
    const ok = (body: string) => body.includes('"code":"0000"');
    const json = { 'content-type': 'application/json' };
    const search = (token: string) => ({ url: `${t.admin}/api/v1/system-manage/users/search`, method: 'POST', headers: { ...json, authorization: `Bearer ${token}` }, body: JSON.stringify({ current: 1, size: 10 }) });
    const results = [
      await measure('bare express handler', { url: `${t.bare}/bare` }, ok),
      await measure('GET /auth/user-info (R_ADMIN token)', { url: `${t.admin}/api/v1/auth/user-info`, headers: { authorization: `Bearer ${t.userToken}` } }, ok),
      await measure('POST /system-manage/users/search (R_ADMIN, API permission)', search(t.userToken), ok),
      await measure('POST /system-manage/users/search (R_SUPER)', search(t.superToken), ok),
      // Login is argon2-bound (4 libuv threads); 8 connections keep the queue short enough to measure latency.
      await measure('POST /auth/login (argon2id defaults, 8 connections)', { url: `${t.admin}/api/v1/auth/login`, method: 'POST', headers: json, body: JSON.stringify({ userName: 'bench-admin', password }), connections: 8 }, ok),
    ];
    const base = results[0].requests.average;
    console.log(`\nadmin benchmark: ${connections} connections, ${seconds} s each, Node ${process.version}\n`);
    console.log(['scenario'.padEnd(60), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'vs bare'.padStart(8), 'errors'.padStart(7)].join(' '));
    for (const r of results) {
      const errors = r.non2xx + r.errors + r.timeouts;
      console.log([r.name.padEnd(60), r.requests.average.toFixed(0).padStart(9), String(r.latency.p50).padStart(8), String(r.latency.p99).padStart(8), `${((r.requests.average / base) * 100).toFixed(0)}%`.padStart(8), String(errors).padStart(7)].join(' '));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

if (process.argv.includes('--serve')) await serveTargets();
else await runBenchmarks();
