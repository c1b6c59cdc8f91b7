/**
 * Time to Ready as a user sees it: `npm run local:up -- --detach` (the README's first command, from
 * the sources through tsx), from the command to its "is Ready" line, stack start included, in the
 * network mode `auto` picks here (namespace as root). Each run is then stopped with `local down`.
 *   node --import tsx bench/time-to-ready-command.ts            (RUNS=3 warm runs)
 *   COLD=1 node --import tsx bench/time-to-ready-command.ts     (first a run that compiles the sources for the containers)
 * Where the time went comes from the stamped progress lines (`[12.3 s]`, seconds since `up` started):
 * the first status of the cluster, its first primary, Healthy, the pooler, and Ready.
 * Goals (issue text): warm ≤ 20 s, compiling ≤ 45 s.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledCacheDir } from '../local/node/compiled-cli.js';
import { median } from './stats.js';

const runs = Number(process.env.RUNS ?? 3);
const cold = process.env.COLD === '1';

interface Figures {
  label: string;
  totalMs: number;
  /** Seconds since `up` started, as the progress lines stamp them. */
  phases: Record<string, number | undefined>;
  network: string;
}

const landmarks: Array<[string, RegExp]> = [
  ['status', /^ {2}(Pending|Creating):/],
  ['primary', /^ {2}Creating: \d+\/\d+ ready, primary/],
  ['healthy', /^ {2}Healthy:/],
  ['pooler', /^ {2}waiting for the pooler/],
];

function phasesOf(output: string): Record<string, number | undefined> {
  const phases: Record<string, number | undefined> = {};
  for (const line of output.split('\n')) {
    const stamp = /\[(\d+\.\d) s\]$/.exec(line)?.[1];
    if (!stamp) continue;
    for (const [name, pattern] of landmarks) if (phases[name] === undefined && pattern.test(line)) phases[name] = Number(stamp);
  }
  phases.ready = Number(/is Ready\. \((\d+\.\d) s\)/.exec(output)?.[1]) || undefined;
  return phases;
}

async function oneRun(label: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-up-bench-'));
  chmodSync(dir, 0o755);
  const started = Date.now();
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('npm', ['run', 'local:up', '--', '--detach', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`local up exited ${code}:\n${text}`))));
  });
  const totalMs = Date.now() - started;
  execFileSync('npm', ['run', 'local:down', '--', '--dir', dir], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
  return { label, totalMs, phases: phasesOf(output), network: /^network: (\w+)/m.exec(output)?.[1] ?? '?' };
}

const results: Figures[] = [];
if (cold) {
  rmSync(compiledCacheDir, { recursive: true, force: true });
  results.push(await oneRun('compiling'));
}
for (let i = 1; i <= runs; i += 1) results.push(await oneRun(`warm ${i}`));

const cell = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(1));
process.stdout.write(`\nnpm run local:up -- --detach, command to Ready (load ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ')[0]})\n`);
process.stdout.write('| run | network | total s | first status | first primary | Healthy | pooler wait from | Ready |\n|---|---|---|---|---|---|---|---|\n');
for (const r of results) {
  const p = r.phases;
  process.stdout.write(
    `| ${r.label} | ${r.network} | **${(r.totalMs / 1000).toFixed(1)}** | ${cell(p.status)} | ${cell(p.primary)} | ${cell(p.healthy)} | ${cell(p.pooler)} | ${cell(p.ready)} |\n`,
  );
}
const warm = results.filter((r) => r.label.startsWith('warm')).map((r) => r.totalMs / 1000);
if (warm.length > 0)
  process.stdout.write(
    `warm median ${median(warm).toFixed(1)} s (goal ≤ 20 s)${cold ? `; compiling ${(results[0]!.totalMs / 1000).toFixed(1)} s (goal ≤ 45 s)` : ''}\n`,
  );
