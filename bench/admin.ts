/**
 * Admin backend benchmark (not run in CI): a bare express handler, GET /api/v1/auth/user-info and
 * POST /api/v1/system-manage/users/search with a valid token, and login, each with autocannon.
 * Prints requests/s, p50 and p99 latency, the ratio to the bare handler, PASS/FAIL against the
 * issue's target for authenticated reads (≥ 40 % of bare, p99 ≤ 25 ms), and the CPU time each
 * request cost in the admin process, PostgreSQL and Redis (from /proc; a figure that stays
 * meaningful when other work loads the machine, unlike requests/s).
 *
 *   node --import tsx bench/admin.ts        (BENCH_SECONDS=10, BENCH_CONNECTIONS=50,
 *                                            BENCH_ONLY=<substring of scenario names>,
 *                                            BENCH_WARMUP_SECONDS=3 per scenario before measuring)
 *
 * The bare handler runs again before each scenario and each ratio uses that neighbouring run, so a
 * change in other load during the run moves both sides of a ratio alike.
 *
 * The servers (bare express and admin, with their own PostgreSQL and Redis) run in a child process
 * so autocannon does not share their event loop.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { loadAdminConfig } from '../admin/config.js';
import { startAdmin } from '../admin/server.js';
import { serve } from '../lib/http.js';
import { createLogger } from '../lib/log.js';
import { startPostgres } from '../test/support/postgres.js';
import { startRedis } from '../test/support/redis.js';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const only = process.env.BENCH_ONLY;
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const password = 'bench-password-1';
const target = { ratio: 0.4, p99Ms: 25 };

interface Targets {
  bare: string;
  admin: string;
  superToken: string;
  userToken: string;
  pids: { admin: number; postgres: number; redis: number };
}

/** CPU seconds (or µs per request) of the admin process, the PostgreSQL server (all its processes) and Redis. */
type CpuSample = { admin: number; postgres: number; redis: number };

const clockTicks = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime and parent pid of one process, or undefined when it is gone (or not Linux). */
function procStat(pid: number): { cpu: number; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / clockTicks };
  } catch {
    return undefined;
  }
}

/** CPU seconds per process: the admin process, Redis and every PostgreSQL process (server and backends). */
function cpuSample(pids: Targets['pids']): Map<number, { cpu: number; role: keyof CpuSample }> | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const sample = new Map<number, { cpu: number; role: keyof CpuSample }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = procStat(pid);
    if (!stat) continue;
    if (pid === pids.admin) sample.set(pid, { cpu: stat.cpu, role: 'admin' });
    else if (pid === pids.redis) sample.set(pid, { cpu: stat.cpu, role: 'redis' });
    else if (pid === pids.postgres || stat.ppid === pids.postgres) sample.set(pid, { cpu: stat.cpu, role: 'postgres' });
  }
  return sample;
}

/** CPU used between two samples by role; a process that ended in between is left out, not subtracted. */
function cpuBetween(before: NonNullable<ReturnType<typeof cpuSample>>, after: NonNullable<ReturnType<typeof cpuSample>>): CpuSample {
  const used: CpuSample = { admin: 0, postgres: 0, redis: 0 };
  for (const [pid, { cpu, role }] of after) used[role] += cpu - (before.get(pid)?.cpu ?? 0);
  return used;
}

interface Measured extends AutocannonResult {
  name: string;
  /** CPU microseconds per request: admin process, PostgreSQL, Redis. */
  cpuPerRequest?: CpuSample;
  /** Whether the read target applies to this scenario. */
  targeted: boolean;
  /** Requests/s of the bare handler measured right before this scenario (the ratio's base). */
  base?: number;
}

async function measure(name: string, pids: Targets['pids'], options: Record<string, unknown>, targeted: boolean, check: (body: string) => boolean): Promise<Measured> {
  const probe = await fetch(options.url as string, { method: (options.method as string) ?? 'GET', headers: options.headers as Record<string, string>, body: options.body as string | undefined });
  const text = await probe.text();
  if (!check(text)) throw new Error(`${name}: unexpected response ${text.slice(0, 200)}`);
  await autocannon({ connections, duration: 1, ...options }); // warm-up: JIT, pools, caches
  const before = cpuSample(pids);
  const result = await autocannon({ connections, duration: seconds, ...options });
  const after = cpuSample(pids);
  const used = before && after ? cpuBetween(before, after) : undefined;
  const perRequest = (cpuSeconds: number): number => (cpuSeconds * 1e6) / Math.max(1, result.requests.total);
  const cpuPerRequest = used && { admin: perRequest(used.admin), postgres: perRequest(used.postgres), redis: perRequest(used.redis) };
  return { name, ...result, cpuPerRequest, targeted };
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
  // Autovacuum would analyze the new rows within a minute; measure the plans a running system has.
  await admin.services.db.query('ANALYZE');
  const postgresPid = Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const targets: Targets = {
    bare: bare.url,
    admin: admin.server.url,
    superToken: await loginAs('admin'),
    userToken: await loginAs('bench-admin'),
    pids: { admin: process.pid, postgres: postgresPid, redis: redis.process.pid ?? 0 },
  };
  process.stdout.write(`${JSON.stringify(targets)}\n`);
}

const fixed = (value: number, width: number, digits = 0): string => value.toFixed(digits).padStart(width);
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** One row for several runs of the same scenario: mean rate, latency and CPU, summed errors. */
function meanOf(runs: Measured[]): Measured {
  const cpu = runs.every((r) => r.cpuPerRequest) ? runs.map((r) => r.cpuPerRequest as CpuSample) : undefined;
  return {
    ...runs[0],
    name: runs.length > 1 ? `${runs[0].name} (mean of ${runs.length})` : runs[0].name,
    requests: { average: mean(runs.map((r) => r.requests.average)), total: runs.reduce((a, r) => a + r.requests.total, 0) },
    latency: { p50: mean(runs.map((r) => r.latency.p50)), p99: mean(runs.map((r) => r.latency.p99)) },
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    timeouts: runs.reduce((a, r) => a + r.timeouts, 0),
    cpuPerRequest: cpu && { admin: mean(cpu.map((c) => c.admin)), postgres: mean(cpu.map((c) => c.postgres)), redis: mean(cpu.map((c) => c.redis)) },
  };
}

function verdict(r: Measured, ratio: number): string {
  if (!r.targeted) return '';
  return ratio >= target.ratio && r.latency.p99 <= target.p99Ms ? 'PASS' : `FAIL (${ratio < target.ratio ? 'ratio' : ''}${ratio < target.ratio && r.latency.p99 > target.p99Ms ? ', ' : ''}${r.latency.p99 > target.p99Ms ? 'p99' : ''})`;
}

function report(results: Measured[], startLoad: number[]): void {
  console.log(`\nadmin benchmark: ${connections} connections, ${seconds} s each, Node ${process.version}`);
  console.log(`load average at start: ${startLoad.map((l) => l.toFixed(2)).join(' ')}; now: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`target for authenticated reads: ≥ ${target.ratio * 100}% of bare req/s and p99 ≤ ${target.p99Ms} ms`);
  console.log('each ratio is to the bare handler measured right before that scenario (the bare row shows the mean)\n');
  console.log(['scenario'.padEnd(60), 'req/s'.padStart(7), 'p50 ms'.padStart(7), 'p99 ms'.padStart(7), 'vs bare'.padStart(8), 'errors'.padStart(7), 'CPU µs/req node+pg+redis'.padStart(26), ' target'].join(' '));
  for (const r of results) {
    const errors = r.non2xx + r.errors + r.timeouts;
    const c = r.cpuPerRequest;
    const cpu = c ? `${fixed(c.admin + c.postgres + c.redis, 5)} = ${fixed(c.admin, 4)}+${fixed(c.postgres, 3)}+${fixed(c.redis, 3)}` : 'n/a';
    const ratio = r.requests.average / (r.base ?? r.requests.average);
    console.log([r.name.padEnd(60), fixed(r.requests.average, 7), fixed(r.latency.p50, 7), fixed(r.latency.p99, 7), `${(ratio * 100).toFixed(0)}%`.padStart(8), String(errors).padStart(7), cpu.padStart(26), verdict(r, ratio)].join(' '));
  }
}

async function runBenchmarks(): Promise<void> {
  const startLoad = loadavg();
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
    const scenarios: [string, Record<string, unknown>, boolean][] = [
      ['bare express handler', { url: `${t.bare}/bare` }, false],
      ['GET /auth/user-info (R_ADMIN token)', { url: `${t.admin}/api/v1/auth/user-info`, headers: { authorization: `Bearer ${t.userToken}` } }, true],
      ['POST /system-manage/users/search (R_ADMIN, API permission)', search(t.userToken), true],
      ['POST /system-manage/users/search (R_SUPER)', search(t.superToken), true],
      // Login is argon2-bound (4 libuv threads); 8 connections keep the queue short enough to measure latency.
      ['POST /auth/login (argon2id defaults, 8 connections)', { url: `${t.admin}/api/v1/auth/login`, method: 'POST', headers: json, body: JSON.stringify({ userName: 'bench-admin', password }), connections: 8 }, false],
    ];
    // Other work on the machine changes over a run, so the bare handler is measured again right
    // before every scenario and each ratio uses that neighbour; the bare row shows their mean.
    // Warm every scenario first (JIT, pools, prepared statements, caches), so the first measured
    // scenario does not pay for what the others then get for free.
    const chosen = scenarios.filter(([name], i) => i === 0 || !only || name.includes(only));
    for (const [, options] of chosen) await autocannon({ connections, duration: warmupSeconds, ...options });
    const [bareName, bareOptions] = scenarios[0];
    const bareRuns: Measured[] = [];
    const results: Measured[] = [];
    for (const [name, options, targeted] of chosen.slice(1)) {
      const bare = await measure(bareName, t.pids, bareOptions, false, ok);
      bareRuns.push(bare);
      results.push({ ...(await measure(name, t.pids, options, targeted, ok)), base: bare.requests.average });
    }
    if (!bareRuns.length) bareRuns.push(await measure(bareName, t.pids, bareOptions, false, ok));
    results.unshift(meanOf(bareRuns));
    report(results, startLoad);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

if (process.argv.includes('--serve')) await serveTargets();
else await runBenchmarks();
