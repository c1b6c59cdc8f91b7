/**
 * Exporter benchmark (not a test): Keelson's exporter next to Debian's prometheus-postgres-exporter
 * against the same PostgreSQL 15, in one run. Prints a table of scrape times, samples per scrape
 * and memory. Run: node --import tsx bench/exporter.ts   (SCRAPES=rounds, RSS_SCRAPES=length of the RSS series,
 * BENCH_NODE=another node binary for the exporter and the floors; default: the pinned Node the image runs)
 *
 * The memory floor is a bare Node process serving one HTTP endpoint, scraped in the same rounds:
 * whatever the exporter uses above it is the exporter's own doing. The exporter starts with the
 * environment its containers get (NODE_OPTIONS); a second floor with the same flags shows their share.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createLogger } from '../lib/log.js';
import { exporterTypes } from '../sidecar/exporter/scrape/connection.js';
import { exporterNodeOptions } from '../api/exporter/node-options.js';
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
// The Node the image runs (the pinned `node` package), not whichever one runs this script: the
// exporter's memory above the floor differs between Node versions (Node 24 loads more per module).
const pinnedNode = resolve(repoRoot, 'node_modules/node/bin/node');
const nodeBin = process.env.BENCH_NODE ?? (existsSync(pinnedNode) ? pinnedNode : process.execPath);
const nodeVersion = execFileSync(nodeBin, ['--version'], { encoding: 'utf8' }).trim();
// The exporter's environment in its containers (operator/builders): Node's start-up flags
// (EXPORTER_NODE_OPTIONS replaces them, to compare).
const exporterFlags = process.env.EXPORTER_NODE_OPTIONS ?? exporterNodeOptions;
const exporterEnv = { NODE_OPTIONS: exporterFlags, LOG_LEVEL: 'error' };

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

/** The queries the exporter runs against each database for this config, found by planning in-process. */
async function plannedQueries(db: TestPostgres, config: string): Promise<Array<{ datname: string; query: string }>> {
  const options = resolveExporterOptions(
    { 'web.listen-address': ['127.0.0.1:0'], 'connect-timeout': '1000', url: db.url, config, 'disable-cache': 'true' },
    {},
  );
  const running = await startExporter(options, createLogger({ name: 'bench', level: 'silent' }));
  try {
    await running.exporter.scrape();
    return running.exporter.servers().flatMap((server) => server.installed().map((r) => ({ datname: server.settings.datname, query: r.collector.query })));
  } finally {
    await running.close();
  }
}

interface RssSeries {
  /** RSS before the first scrape. */
  idle: number;
  /** RSS after every 100 scrapes, from the end of the warm-up on. */
  points: number[];
  /** Peak RSS (VmHWM) within the measured window, so a spike between two samples is not missed. */
  windowPeak: number;
}

/** Resets VmHWM so that it reports the peak from now on (Linux clear_refs 5); false where not permitted. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

const rssWarmup = 200;

/**
 * RSS of one exporter process over RSS_SCRAPES scrapes: sampled every 100 scrapes after a
 * 200-scrape warm-up (startup and JIT settle there), plus the peak inside that window.
 */
async function rssSeries(db: TestPostgres, config: string): Promise<RssSeries> {
  const port = await freePort();
  const child = await startProcess(
    nodeBin,
    [keelsonBin, 'exporter', '--web.listen-address', `127.0.0.1:${port}`, '-T', '1000', '--config', config],
    { ...exporterEnv, PG_EXPORTER_URL: db.url },
    port,
  );
  const pid = child.pid ?? 0;
  try {
    const url = `http://127.0.0.1:${port}/metrics`;
    const idle = memory(pid).rss;
    await scrapeSeries(url, rssWarmup);
    const peakReset = resetPeak(pid);
    const points: number[] = [memory(pid).rss];
    for (let done = rssWarmup; done < rssScrapes; done += 100) {
      await scrapeSeries(url, 100);
      points.push(memory(pid).rss);
    }
    return { idle, points, windowPeak: peakReset ? memory(pid).hwm : Math.max(...points) };
  } finally {
    await stopProcess(child);
  }
}

function ensureGoExporter(): boolean {
  if (existsSync(goExporterBin)) return true;
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'prometheus-postgres-exporter'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    // The package starts its own service where it can; this benchmark runs its own copy.
    execFileSync('sh', ['-c', 'service prometheus-postgres-exporter stop >/dev/null 2>&1 || true']);
  } catch {
    return false;
  }
  return existsSync(goExporterBin);
}

function pgbench(pg: TestPostgres, args: string[]): void {
  execFileSync(
    resolve(process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin', 'pgbench'),
    ['-h', pg.host, '-p', String(pg.port), '-U', pg.superuser, ...args, 'app'],
    { env: { ...process.env, PGPASSWORD: pg.password }, stdio: 'ignore' },
  );
}

const fmt = (n: number) => n.toFixed(2).padStart(8);

function compileKeelson(): void {
  rmSync(distDir, { recursive: true, force: true });
  try {
    execFileSync(process.execPath, [resolve(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--outDir', distDir], {
      cwd: repoRoot,
      stdio: 'ignore',
    });
  } catch {
    // tsc still emits when other parts of the tree have type errors; only a missing entry is fatal.
  }
  if (!existsSync(keelsonBin)) throw new Error('compiling keelson for the benchmark failed');
}

interface Target {
  name: string;
  /** Sample counts of the first and the last measured round (series that grow with workload show here). */
  firstSamples?: number;
  /** Runs one scrape (or one round of direct queries) and returns its sample count. */
  once(): Promise<number>;
  pid?: number;
  times: number[];
  samples: number;
  stop(): Promise<void>;
}

async function keelsonTarget(db: TestPostgres, name: string, args: string[]): Promise<Target> {
  const port = await freePort();
  const child = await startProcess(
    nodeBin,
    [keelsonBin, 'exporter', '--web.listen-address', `127.0.0.1:${port}`, '-T', '1000', ...args],
    { ...exporterEnv, PG_EXPORTER_URL: db.url },
    port,
  );
  return httpTarget(name, `http://127.0.0.1:${port}/metrics`, child);
}

async function goTarget(db: TestPostgres): Promise<Target | undefined> {
  if (!ensureGoExporter()) return undefined;
  const port = await freePort();
  const child = await startProcess(goExporterBin, [`--web.listen-address=127.0.0.1:${port}`], { DATA_SOURCE_NAME: `${db.url}?sslmode=disable` }, port);
  return httpTarget('prometheus-postgres-exporter (Debian)', `http://127.0.0.1:${port}/metrics`, child);
}

/**
 * The memory floor: a bare Node process that answers one HTTP endpoint with a fixed body, with
 * Node's default flags; with `nodeOptions`, the same process started as the exporter is.
 */
async function bareNodeTarget(nodeOptions?: string): Promise<Target> {
  const port = await freePort();
  const source = `require('node:http').createServer((q, r) => r.end('up 1\\n')).listen(${port}, '127.0.0.1')`;
  const child = await startProcess(nodeBin, ['-e', source], { NODE_OPTIONS: nodeOptions ?? '' }, port);
  return httpTarget(nodeOptions ? `bare Node HTTP server, ${nodeOptions}` : 'bare Node HTTP server (floor)', `http://127.0.0.1:${port}/`, child);
}

function httpTarget(name: string, url: string, child: ChildProcess): Target {
  return {
    name,
    pid: child.pid,
    times: [],
    samples: 0,
    async once() {
      const body = await (await fetch(url)).text();
      return countSamples(body);
    },
    stop: () => stopProcess(child),
  };
}

/** The planned queries of a config run one after another over plain connections, as a baseline. */
async function directTarget(db: TestPostgres, config: string): Promise<Target> {
  const queries = await plannedQueries(db, config);
  const clients = new Map<string, pg.Client>();
  for (const { datname } of queries) {
    if (clients.has(datname)) continue;
    const client = new pg.Client({ connectionString: db.urlFor(datname), types: exporterTypes });
    await client.connect();
    clients.set(datname, client);
  }
  return {
    name: `same queries run directly (${queries.length})`,
    times: [],
    samples: 0,
    async once() {
      let rows = 0;
      for (const { datname, query } of queries) rows += (await clients.get(datname)?.query({ text: query, rowMode: 'array' }))?.rowCount ?? 0;
      return rows;
    },
    async stop() {
      for (const client of clients.values()) await client.end();
    },
  };
}

/**
 * Every target is scraped once per round, in turn, so that all of them see the same machine load
 * (the 2-core machine is shared, and absolute figures move with it; the comparisons hold).
 */
async function interleaved(targets: Target[], rounds: number): Promise<void> {
  for (let r = 0; r < rounds + 5; r++) {
    for (const target of targets) {
      const started = performance.now();
      const samples = await target.once();
      if (r >= 5) {
        target.times.push(performance.now() - started);
        target.firstSamples ??= samples;
        target.samples = samples;
      }
    }
  }
}

interface Verdict {
  line: string;
  pass: boolean;
}

const verdict = (target: string, measured: string, pass: boolean): Verdict => ({ line: `${target}: ${measured}`, pass });

const median = (t: Target) =>
  percentile(
    [...t.times].sort((a, b) => a - b),
    0.5,
  );

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const loadAtStart = load();
  compileKeelson();
  const db = await startPostgres({ settings: { shared_preload_libraries: `'pg_stat_statements'` } });
  const targets: Target[] = [];
  try {
    await db.query('CREATE EXTENSION pg_stat_statements');
    await db.query('CREATE DATABASE app');
    pgbench(db, ['-i', '-s', '1', '-q']);
    pgbench(db, ['-c', '2', '-t', '200', '-n']);
    const pgExporterYml = resolve(sharedConfig, 'pg_exporter.yml');
    targets.push(await keelsonTarget(db, 'keelson, built-in set, cached', []));
    targets.push(await keelsonTarget(db, 'keelson, built-in set, uncached', ['--disable-cache']));
    targets.push(await keelsonTarget(db, 'keelson, pg_exporter config, cached', ['--config', pgExporterYml]));
    const uncached = await keelsonTarget(db, 'keelson, pg_exporter config, uncached', ['--config', pgExporterYml, '--disable-cache']);
    targets.push(uncached);
    const direct = await directTarget(db, pgExporterYml);
    targets.push(direct);
    const go = await goTarget(db);
    if (go) targets.push(go);
    const floor = await bareNodeTarget();
    targets.push(floor);
    const floorWithFlags = await bareNodeTarget(exporterFlags);
    targets.push(floorWithFlags);
    await interleaved(targets, scrapes);

    process.stdout.write(
      `\nExporter benchmark: Node ${nodeVersion}, exporter NODE_OPTIONS=${exporterFlags || '(none)'}${exporterFlags === exporterNodeOptions ? ' as in its containers' : ` (its containers: ${exporterNodeOptions})`}; PostgreSQL 15 on 127.0.0.1; ${scrapes} rounds, each target scraped once per round in turn (after 5 warm-up rounds); load average at the start ${loadAtStart}\n\n`,
    );
    process.stdout.write(
      `${'target'.padEnd(42)} ${'median ms'.padStart(9)} ${'p95 ms'.padStart(8)} ${'samples first→last'.padStart(19)} ${'RSS MB'.padStart(8)} ${'peak RSS MB'.padStart(12)}\n`,
    );
    const rssAtEnd = new Map<Target, { rss: number; hwm: number }>();
    for (const t of targets) if (t.pid) rssAtEnd.set(t, memory(t.pid));
    for (const t of targets) {
      const sorted = [...t.times].sort((a, b) => a - b);
      const mem = rssAtEnd.get(t);
      const samples = t === direct ? `${t.samples} rows` : `${t.firstSamples}→${t.samples}`;
      process.stdout.write(
        `${t.name.padEnd(42)} ${fmt(percentile(sorted, 0.5)).padStart(9)} ${fmt(percentile(sorted, 0.95))} ${samples.padStart(19)} ${(mem ? fmt(mem.rss) : '-').padStart(8)} ${(mem ? fmt(mem.hwm) : '-').padStart(12)}\n`,
      );
    }
    const verdicts: Verdict[] = [];
    const cachedBudgetMs = 3;
    for (const t of [targets[0], targets[2]])
      verdicts.push(verdict(`${t.name}: median ≤ ${cachedBudgetMs} ms (${t.samples} series)`, `${median(t).toFixed(2)} ms`, median(t) <= cachedBudgetMs));
    const directRatio = median(uncached) / median(direct);
    verdicts.push(verdict('uncached pg_exporter config ≤ 1.25x its queries run directly (medians)', `${directRatio.toFixed(2)}x`, directRatio <= 1.25));
    if (go) {
      const cachedRatio = median(targets[0]) / median(go);
      verdicts.push(verdict('built-in set (cached, the default) median ≤ Go exporter median', `${cachedRatio.toFixed(2)}x`, cachedRatio <= 1));
      const uncachedRatio = median(targets[1]) / median(go);
      verdicts.push(verdict('built-in set with --disable-cache median ≤ Go exporter median', `${uncachedRatio.toFixed(2)}x`, uncachedRatio <= 1));
    } else {
      verdicts.push({ line: 'built-in set median ≤ Go exporter median: prometheus-postgres-exporter not available (apt-get install failed)', pass: false });
    }
    const floorPeak = rssAtEnd.get(floor)?.hwm ?? 0;
    for (const t of [targets[0], targets[1]]) {
      const over = (rssAtEnd.get(t)?.hwm ?? 0) - floorPeak;
      verdicts.push(verdict(`${t.name}: peak RSS ≤ bare Node floor + 10 MB (floor ${floorPeak.toFixed(1)} MB)`, `+${over.toFixed(1)} MB`, over <= 10));
    }
    // Not a goal, shown so the flags' share is visible: the same floor started with the exporter's flags.
    const flaggedPeak = rssAtEnd.get(floorWithFlags)?.hwm ?? 0;
    process.stdout.write(
      `\nAbove a bare Node server started with the exporter's flags too (${exporterFlags || 'none'}, ${flaggedPeak.toFixed(1)} MB): ${[targets[0], targets[1]].map((t) => `${t.name} +${((rssAtEnd.get(t)?.hwm ?? 0) - flaggedPeak).toFixed(1)} MB`).join(', ')}\n`,
    );
    for (const t of targets) await t.stop();
    targets.length = 0;

    const rss = await rssSeries(db, pgExporterYml);
    const { points } = rss;
    const mean = points.reduce((a, b) => a + b, 0) / points.length;
    const low = Math.min(...points);
    const high = Math.max(rss.windowPeak, ...points);
    const deviation = (Math.max(high - mean, mean - low) / mean) * 100;
    process.stdout.write(
      `\nRSS of one exporter (pg_exporter config, cached) over ${rssScrapes} scrapes: ${rss.idle.toFixed(1)} MB before the first scrape; ` +
        `after a ${rssWarmup}-scrape warm-up, sampled every 100 scrapes: first ${points[0].toFixed(1)}, last ${points[points.length - 1].toFixed(1)}, ` +
        `mean ${mean.toFixed(1)}, min ${low.toFixed(1)}, max ${Math.max(...points).toFixed(1)}, peak within the window ${rss.windowPeak.toFixed(1)} MB\n`,
    );
    verdicts.push(
      verdict(`RSS flat over ${rssScrapes} scrapes: max deviation from the mean (window peak included) ≤ 10%`, `${deviation.toFixed(1)}%`, deviation <= 10),
    );

    process.stdout.write(`\nTargets (load average at the end: ${load()})\n`);
    for (const v of verdicts) process.stdout.write(`${v.pass ? 'PASS' : 'FAIL'}  ${v.line}\n`);
  } finally {
    for (const t of targets) await t.stop().catch(() => undefined);
    await db.stop();
    rmSync(distDir, { recursive: true, force: true });
  }
}

await main();
