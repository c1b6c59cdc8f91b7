/**
 * Exporter benchmark (not a test): Keelson's exporter next to Debian's prometheus-postgres-exporter
 * against the same PostgreSQL 15, in one run. Prints a table of scrape times, samples per scrape
 * and memory. Run: node --import tsx bench/exporter.ts   (SCRAPES=2000 for the RSS series)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createLogger } from '../lib/log.js';
import { exporterTypes } from '../sidecar/exporter/connection.js';
import { resolveExporterOptions } from '../sidecar/exporter/options.js';
import { startExporter } from '../sidecar/exporter/run.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { freePort, waitForPort } from '../test/support/ports.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sharedConfig = process.env.KEELSON_PG_EXPORTER_CONFIG ?? resolve(repoRoot, '../shared/pg_exporter-config');
const goExporterBin = '/usr/bin/prometheus-postgres-exporter';
const scrapes = Number(process.env.SCRAPES ?? 200);
// The exporter runs compiled, as in the image; tsx would add its compiler to every measurement.
const distDir = resolve(repoRoot, 'bench/.exporter-dist');
const keelsonBin = resolve(distDir, 'bin/keelson.js');
const rssScrapes = Number(process.env.RSS_SCRAPES ?? 2000);

interface Row {
  name: string;
  median: number;
  p95: number;
  samples: number;
  rssMb: number;
  note?: string;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];
}

function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

const countSamples = (body: string) => body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;

async function scrapeSeries(url: string, count: number): Promise<{ times: number[]; samples: number }> {
  const times: number[] = [];
  let samples = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url);
    const body = await response.text();
    times.push(performance.now() - started);
    samples = countSamples(body);
  }
  return { times, samples };
}

async function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    await waitForPort('127.0.0.1', port, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${command} did not start: ${stderr}`, { cause: error });
  }
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function keelsonRun(pg: TestPostgres, name: string, extraArgs: string[], count: number, note?: string): Promise<Row & { child?: never }> {
  const port = await freePort();
  const child = await startProcess(process.execPath, [keelsonBin, 'exporter', '--web.listen-address', `127.0.0.1:${port}`, '-T', '1000', ...extraArgs], { PG_EXPORTER_URL: pg.url, LOG_LEVEL: 'error' }, port);
  try {
    const url = `http://127.0.0.1:${port}/metrics`;
    await scrapeSeries(url, 5); // warm-up: plan, connect, JIT
    const { times, samples } = await scrapeSeries(url, count);
    const sorted = [...times].sort((a, b) => a - b);
    return { name, median: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), samples, rssMb: memory(child.pid ?? 0).hwm, note };
  } finally {
    await stopProcess(child);
  }
}

/** The queries the exporter runs against each database for this config, found by planning in-process. */
async function plannedQueries(db: TestPostgres, config: string): Promise<Array<{ datname: string; query: string }>> {
  const options = resolveExporterOptions({ 'web.listen-address': ['127.0.0.1:0'], 'connect-timeout': '1000', url: db.url, config, 'disable-cache': 'true' }, {});
  const running = await startExporter(options, createLogger({ name: 'bench', level: 'silent' }));
  try {
    await running.exporter.scrape();
    return running.exporter.servers().flatMap((server) => server.installed().map((r) => ({ datname: server.settings.datname, query: r.collector.query })));
  } finally {
    await running.close();
  }
}

/**
 * Uncached scrapes of a config next to what its queries cost PostgreSQL in the same run:
 * pg_stat_statements execution + planning time per scrape, and the client-observed time of
 * running the same planned queries one after another over plain connections.
 */
async function uncachedVersusQueries(db: TestPostgres, config: string): Promise<{ row: Row; serverMs: number; directMs: number }> {
  const rounds = 50;
  const queries = await plannedQueries(db, config);
  const port = await freePort();
  const child = await startProcess(process.execPath, [keelsonBin, 'exporter', '--web.listen-address', `127.0.0.1:${port}`, '-T', '1000', '--config', config, '--disable-cache'], { PG_EXPORTER_URL: db.url, LOG_LEVEL: 'error' }, port);
  let row: Row;
  let serverMs: number;
  try {
    const url = `http://127.0.0.1:${port}/metrics`;
    await scrapeSeries(url, 5);
    await db.query('SELECT pg_stat_statements_reset()');
    const { times, samples } = await scrapeSeries(url, rounds);
    const total = await db.query<{ ms: number }>(`SELECT sum(total_exec_time + total_plan_time)::float8 AS ms FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements_reset%'`);
    serverMs = Number(total.rows[0].ms) / rounds;
    const sorted = [...times].sort((a, b) => a - b);
    row = { name: 'keelson, pg_exporter config, uncached', median: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), samples, rssMb: memory(child.pid ?? 0).hwm };
  } finally {
    await stopProcess(child);
  }
  const clients = new Map<string, pg.Client>();
  for (const { datname } of queries) {
    if (clients.has(datname)) continue;
    const client = new pg.Client({ connectionString: db.urlFor(datname), types: exporterTypes });
    await client.connect();
    clients.set(datname, client);
  }
  const direct: number[] = [];
  for (let r = 0; r < rounds + 5; r++) {
    const started = performance.now();
    for (const { datname, query } of queries) await clients.get(datname)?.query({ text: query, rowMode: 'array' });
    if (r >= 5) direct.push(performance.now() - started);
  }
  for (const client of clients.values()) await client.end();
  const directMs = [...direct].sort((a, b) => a - b)[Math.floor(direct.length / 2)];
  return { row, serverMs, directMs };
}

/** RSS sampled every 100 scrapes after a 200-scrape warm-up, to see whether memory stays flat. */
async function rssSeries(db: TestPostgres, config: string): Promise<number[]> {
  const port = await freePort();
  const child = await startProcess(process.execPath, [keelsonBin, 'exporter', '--web.listen-address', `127.0.0.1:${port}`, '-T', '1000', '--config', config], { PG_EXPORTER_URL: db.url, LOG_LEVEL: 'error' }, port);
  try {
    const url = `http://127.0.0.1:${port}/metrics`;
    await scrapeSeries(url, 200);
    const points: number[] = [memory(child.pid ?? 0).rss];
    for (let done = 200; done < rssScrapes; done += 100) {
      await scrapeSeries(url, 100);
      points.push(memory(child.pid ?? 0).rss);
    }
    return points;
  } finally {
    await stopProcess(child);
  }
}

function ensureGoExporter(): boolean {
  if (existsSync(goExporterBin)) return true;
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'prometheus-postgres-exporter'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    // The package starts its own service where it can; this benchmark runs its own copy.
    execFileSync('sh', ['-c', 'service prometheus-postgres-exporter stop >/dev/null 2>&1 || true']);
  } catch {
    return false;
  }
  return existsSync(goExporterBin);
}

async function goRun(pg: TestPostgres): Promise<Row | undefined> {
  if (!ensureGoExporter()) return undefined;
  const port = await freePort();
  const child = await startProcess(goExporterBin, [`--web.listen-address=127.0.0.1:${port}`], { DATA_SOURCE_NAME: `${pg.url}?sslmode=disable` }, port);
  try {
    const url = `http://127.0.0.1:${port}/metrics`;
    await scrapeSeries(url, 5);
    const { times, samples } = await scrapeSeries(url, scrapes);
    const sorted = [...times].sort((a, b) => a - b);
    return { name: 'prometheus-postgres-exporter (Debian)', median: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), samples, rssMb: memory(child.pid ?? 0).hwm };
  } finally {
    await stopProcess(child);
  }
}

function pgbench(pg: TestPostgres, args: string[]): void {
  execFileSync(resolve(process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin', 'pgbench'), ['-h', pg.host, '-p', String(pg.port), '-U', pg.superuser, ...args, 'app'], { env: { ...process.env, PGPASSWORD: pg.password }, stdio: 'ignore' });
}

const fmt = (n: number) => n.toFixed(2).padStart(8);

function compileKeelson(): void {
  rmSync(distDir, { recursive: true, force: true });
  try {
    execFileSync(process.execPath, [resolve(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--outDir', distDir], { cwd: repoRoot, stdio: 'ignore' });
  } catch {
    // tsc still emits when other parts of the tree have type errors; only a missing entry is fatal.
  }
  if (!existsSync(keelsonBin)) throw new Error('compiling keelson for the benchmark failed');
}

async function main(): Promise<void> {
  compileKeelson();
  const pg = await startPostgres({ settings: { shared_preload_libraries: `'pg_stat_statements'`, 'pg_stat_statements.track_planning': 'on' } });
  try {
    await pg.query('CREATE EXTENSION pg_stat_statements');
    await pg.query('CREATE DATABASE app');
    pgbench(pg, ['-i', '-s', '1', '-q']);
    pgbench(pg, ['-c', '2', '-t', '200', '-n']);
    const rows: Row[] = [];
    rows.push(await keelsonRun(pg, 'keelson, built-in set, cached', [], scrapes));
    rows.push(await keelsonRun(pg, 'keelson, built-in set, uncached', ['--disable-cache'], scrapes));
    rows.push(await keelsonRun(pg, 'keelson, pg_exporter config, cached', ['--config', resolve(sharedConfig, 'pg_exporter.yml')], scrapes));
    const uncached = await uncachedVersusQueries(pg, resolve(sharedConfig, 'pg_exporter.yml'));
    rows.push({
      ...uncached.row,
      note: `queries run directly: ${uncached.directMs.toFixed(2)} ms (ratio ${(uncached.row.median / uncached.directMs).toFixed(2)}); pg_stat_statements exec+plan ${uncached.serverMs.toFixed(2)} ms (ratio ${(uncached.row.median / uncached.serverMs).toFixed(2)})`,
    });
    const go = await goRun(pg);
    if (go) rows.push(go);
    const rss = await rssSeries(pg, resolve(sharedConfig, 'pg_exporter.yml'));

    process.stdout.write(`\nExporter benchmark: PostgreSQL 15 on 127.0.0.1, ${scrapes} sequential scrapes per row (after 5 warm-up)\n\n`);
    process.stdout.write(`${'exporter / mode'.padEnd(42)} ${'median ms'.padStart(9)} ${'p95 ms'.padStart(8)} ${'samples'.padStart(8)} ${'peak RSS MB'.padStart(12)}  note\n`);
    for (const r of rows) {
      process.stdout.write(`${r.name.padEnd(42)} ${fmt(r.median).padStart(9)} ${fmt(r.p95)} ${String(r.samples).padStart(8)} ${fmt(r.rssMb).padStart(12)}  ${r.note ?? ''}\n`);
    }
    if (!go) process.stdout.write('prometheus-postgres-exporter: not available (apt-get install failed)\n');
    const low = Math.min(...rss);
    const high = Math.max(...rss);
    const mean = rss.reduce((a, b) => a + b, 0) / rss.length;
    process.stdout.write(
      `\nRSS over ${rssScrapes} scrapes (pg_exporter config, cached), sampled every 100 after 200: first ${rss[0].toFixed(1)} MB, last ${rss[rss.length - 1].toFixed(1)} MB, ` +
        `min ${low.toFixed(1)}, max ${high.toFixed(1)}, mean ${mean.toFixed(1)} (max deviation from mean ${((Math.max(high - mean, mean - low) / mean) * 100).toFixed(1)}%)\n`,
    );
  } finally {
    await pg.stop();
    rmSync(distDir, { recursive: true, force: true });
  }
}

await main();
