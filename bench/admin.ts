/**
 * Admin backend benchmark (not run in CI): a bare express handler, GET /api/v1/auth/user-info and
 * POST /api/v1/system-manage/users/search with a valid token, and login, each with autocannon.
 * Prints requests/s, p50 and p99 latency and the ratio to the bare handler.
 *
 *   node --import tsx bench/admin.ts        (BENCH_SECONDS=10, BENCH_CONNECTIONS=50)
 */
import { createRequire } from 'node:module';
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
  const result = await autocannon({ connections, duration: seconds, ...options });
  return { name, ...result };
}

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
try {
  const login = (await (await fetch(`${admin.server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userName: 'admin', password }) })).json()) as { data: { token: string } };
  // A non-super user, so the search goes through the full API permission check.
  const hash = await admin.services.passwords.hash(password);
  const { rows } = await admin.services.db.query<{ id: number }>(`INSERT INTO users (user_name, password) VALUES ('bench-admin', $1) RETURNING id`, [hash]);
  await admin.services.db.query(`INSERT INTO user_roles SELECT $1, id FROM roles WHERE role_code = 'R_ADMIN'`, [rows[0].id]);
  for (let i = 0; i < 200; i++) await admin.services.db.query(`INSERT INTO users (user_name, password) VALUES ($1, 'x')`, [`user${i}`]);
  const userLogin = (await (await fetch(`${admin.server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userName: 'bench-admin', password }) })).json()) as { data: { token: string } };
  const ok = (body: string) => body.includes('"code":"0000"');
  const json = { 'content-type': 'application/json' };

  const results = [
    await measure('bare express handler', { url: `${bare.url}/bare` }, ok),
    await measure('GET /auth/user-info (R_ADMIN token)', { url: `${admin.server.url}/api/v1/auth/user-info`, headers: { authorization: `Bearer ${userLogin.data.token}` } }, ok),
    await measure('POST /system-manage/users/search (R_ADMIN, API permission)', {
      url: `${admin.server.url}/api/v1/system-manage/users/search`, method: 'POST', headers: { ...json, authorization: `Bearer ${userLogin.data.token}` }, body: JSON.stringify({ current: 1, size: 10 }),
    }, ok),
    await measure('POST /system-manage/users/search (R_SUPER)', {
      url: `${admin.server.url}/api/v1/system-manage/users/search`, method: 'POST', headers: { ...json, authorization: `Bearer ${login.data.token}` }, body: JSON.stringify({ current: 1, size: 10 }),
    }, ok),
    await measure('POST /auth/login (argon2id defaults)', { url: `${admin.server.url}/api/v1/auth/login`, method: 'POST', headers: json, body: JSON.stringify({ userName: 'bench-admin', password }) }, ok),
  ];
  const base = results[0].requests.average;
  console.log(`\nadmin benchmark: ${connections} connections, ${seconds} s each, Node ${process.version}\n`);
  console.log(['scenario'.padEnd(60), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'vs bare'.padStart(8), 'errors'.padStart(7)].join(' '));
  for (const r of results) {
    const errors = r.non2xx + r.errors + r.timeouts;
    console.log([r.name.padEnd(60), r.requests.average.toFixed(0).padStart(9), String(r.latency.p50).padStart(8), String(r.latency.p99).padStart(8), `${((r.requests.average / base) * 100).toFixed(0)}%`.padStart(8), String(errors).padStart(7)].join(' '));
  }
} finally {
  await admin.close();
  await bare.close();
  await redis.stop();
  await pg.stop();
}
