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
 * The servers run in a child process (bench/admin/servers.ts) so autocannon does not share their
 * event loop. Modules: admin/cpu.ts (CPU per process from /proc), admin/measure.ts (one autocannon
 * run), admin/scenarios.ts, admin/report.ts.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { autocannon, meanOf, measure, type Measured, type RunSettings } from './admin/measure.js';
import { report } from './admin/report.js';
import { scenarios } from './admin/scenarios.js';
import type { Targets } from './admin/servers.js';

const settings: RunSettings = { seconds: Number(process.env.BENCH_SECONDS ?? 10), connections: Number(process.env.BENCH_CONNECTIONS ?? 50) };
const only = process.env.BENCH_ONLY;
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const serversModule = fileURLToPath(new URL('./admin/servers.ts', import.meta.url));

/** Starts the server process and returns its targets once it has printed them. */
async function startServers(): Promise<{ targets: Targets; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', serversModule, '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited ${code}`)));
    });
    return { targets: JSON.parse(line) as Targets, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function runBenchmarks(): Promise<void> {
  const startLoad = loadavg();
  const servers = await startServers();
  try {
    const t = servers.targets;
    const ok = (body: string) => body.includes('"code":"0000"');
    const all = scenarios(t);
    // Warm every scenario first (JIT, pools, prepared statements, caches), so the first measured
    // scenario does not pay for what the others then get for free.
    const chosen = all.filter(({ name }, i) => i === 0 || !only || name.includes(only));
    for (const { options } of chosen) await autocannon({ connections: settings.connections, duration: warmupSeconds, ...options });
    // Other work on the machine changes over a run, so the bare handler is measured again right
    // before every scenario and each ratio uses that neighbour; the bare row shows their mean.
    const bare = all[0];
    const bareRuns: Measured[] = [];
    const results: Measured[] = [];
    for (const { name, options, targeted } of chosen.slice(1)) {
      const base = await measure(bare.name, t.pids, settings, bare.options, false, ok);
      bareRuns.push(base);
      results.push({ ...(await measure(name, t.pids, settings, options, targeted, ok)), base: base.requests.average });
    }
    if (!bareRuns.length) bareRuns.push(await measure(bare.name, t.pids, settings, bare.options, false, ok));
    results.unshift(meanOf(bareRuns));
    report(results, settings, startLoad);
  } finally {
    await servers.stop();
  }
}

await runBenchmarks();
