#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner and the tsx loader, one process per file.
// Usage: npm test [-- <path filter> ...]   e.g. npm test -- test/lib test/sidecar/exporter
//
// First it checks (and as root installs) what the suites need, through the same prerequisites
// list as `keelson local up` and .ci/run (`keelson local doctor --for tests`).
// Files run side by side in TEST_CONCURRENCY slots (default 2): most suites wait on timers, servers
// and child processes rather than on the CPU. The files scripts/test-lanes.mjs marks `alone`
// (network namespaces and nftables, fixed addresses, whole-machine stacks) run first, one at a time. Each file's output is printed whole when it ends, so outputs never interleave; the run
// closes with the ten slowest files and the totals of all files.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { runsAlone } from './test-lanes.mjs';

function collect(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...collect(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const filters = process.argv.slice(2);
const files = collect('test')
  .map((f) => relative('.', f))
  .filter((f) => filters.length === 0 || filters.some((prefix) => f.startsWith(prefix) || f.includes(prefix)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

const doctor = spawnSync(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', 'local', 'doctor', '--for', 'tests', '--install', '--quiet'], {
  stdio: 'inherit',
});
if (doctor.status !== 0) process.exit(doctor.status ?? 1);

// The contract suites also run against a real kube-apiserver once it is built (test/support/oracle.ts).
const oracleBuilt = [
  process.env.KEELSON_ORACLE_DIR,
  '/var/cache/keelson/kube-apiserver-1.20.2',
  join(homedir(), '.cache', 'keelson', 'kube-apiserver-1.20.2'),
].some((dir) => dir && existsSync(join(dir, 'bin', 'kube-apiserver')));
if (!oracleBuilt)
  process.stdout.write(
    'the real kube-apiserver is not built: its suites run against the stand-in only (build it with sh scripts/oracle/ci-step.sh, about 6 min; CI requires it)\n',
  );

const slots = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 2) || 1);
// A file's own hard limit: a suite whose timers never fire must not hold the run until CI's limit.
const fileLimitMs = Number(process.env.TEST_FILE_LIMIT_MS ?? 20 * 60_000);
// How long a file may keep running after its runner printed the summary (open handles).
const summaryGraceMs = 10_000;
// Durations of the last run here (else those of a full run kept beside this script, when there
// is one), longest first, so long files start early and both lanes end together.
const timingsFile = join('.tmp', 'test-timings.json');
let previous = {};
for (const candidate of [timingsFile, join('scripts', 'test-timings.json')]) {
  try {
    previous = JSON.parse(readFileSync(candidate, 'utf8'));
    break;
  } catch {
    // not there: the next candidate, or alphabetical order
  }
}
const queue = [...files].sort((a, b) => (previous[b] ?? 60_000) - (previous[a] ?? 60_000));

const counters = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];
const totals = Object.fromEntries(counters.map((c) => [c, 0]));
const durations = {};
const failedFiles = [];
/** Each failed file's own account of its failures, printed again at the very end of the run. */
const failureDigests = [];
const started = Date.now();

/** The counts from the spec reporter's closing lines ("ℹ tests 12"). */
function counts(output) {
  const found = {};
  for (const name of counters) {
    const matches = [...output.matchAll(new RegExp(`^ℹ ${name} (\\d+)$`, 'gm'))];
    if (matches.length > 0) found[name] = Number(matches.at(-1)[1]);
  }
  return found;
}

/**
 * The spec reporter's "failing tests" section of a file's output (the assertion and where it
 * failed), or its last lines when it died without one; bounded, so a long log's tail still holds
 * every failure's reason.
 */
function failureDigest(output) {
  const lines = output.trimEnd().split('\n');
  const from = lines.findIndex((line) => line.startsWith('✖ failing tests:'));
  const section = from >= 0 ? lines.slice(from + 1).filter((line) => !/^\s+at .*(node:|node_modules)/.test(line)) : lines.slice(-20);
  const kept = section.slice(0, 80);
  return `${kept.join('\n')}${section.length > kept.length ? `\n… ${section.length - kept.length} more lines above, in the file's own output` : ''}`;
}

let startedFiles = 0;
const children = new Set();
// Stopping the run stops the files still running (each ends its own servers on SIGTERM).
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(130);
  });
}

function runFile(file) {
  return new Promise((resolve) => {
    const begin = Date.now();
    startedFiles += 1;
    // Its output comes whole when it ends; meanwhile this line says what is running.
    process.stdout.write(`… ${file} started (${startedFiles}/${files.length}, ${Math.round((begin - started) / 1000)} s)\n`);
    // No --test-force-exit: with it Node 24's runner sometimes ends a file before its last tests
    // ran and still reports success (loop-rules.test.ts: 2 of 25 runs short, 0 of 20 without).
    // A file that keeps handles open after its summary is stopped here instead, after a grace.
    const args = ['--import', 'tsx', '--test', '--test-reporter=spec', file];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
    children.add(child);
    let output = '';
    let lingering;
    child.stdout.on('data', (d) => {
      output += d;
      if (!lingering && /^ℹ duration_ms \d/m.test(output)) lingering = setTimeout(() => child.kill('SIGKILL'), summaryGraceMs);
    });
    child.stderr.on('data', (d) => (output += d));
    const limit = setTimeout(() => {
      output += `\n✖ ${file}: killed after ${fileLimitMs / 60_000} min\n`;
      child.kill('SIGKILL');
    }, fileLimitMs);
    child.on('close', (code, signal) => {
      children.delete(child);
      clearTimeout(limit);
      clearTimeout(lingering);
      const ms = Date.now() - begin;
      durations[file] = ms;
      const found = counts(output);
      for (const name of counters) totals[name] += found[name] ?? 0;
      const endedAfterSummary = code === null && signal === 'SIGKILL' && lingering !== undefined && /^ℹ duration_ms \d/m.test(output);
      if (endedAfterSummary) output += `\n(stopped ${summaryGraceMs / 1000} s after its summary: handles left open)\n`;
      const ok = (code === 0 || (endedAfterSummary && !found.fail)) && found.tests !== undefined;
      if (!ok) {
        failedFiles.push(file);
        // A file that died before reporting still counts as a failure in the totals.
        if (!found.fail) totals.fail += 1;
        failureDigests.push(`▶ ${file}\n${failureDigest(output)}`);
      }
      process.stdout.write(`\n▶ ${file} (${(ms / 1000).toFixed(1)} s${ok ? '' : `, FAILED: exit ${code ?? signal}`})\n${output.trimEnd()}\n`);
      resolve();
    });
  });
}

// The `alone` files first, one after another; then the rest side by side, longest first.
for (const file of queue.filter(runsAlone)) await runFile(file);
const shared = queue.filter((f) => !runsAlone(f));
await Promise.all(
  Array.from({ length: slots }, async () => {
    for (let file = shared.shift(); file !== undefined; file = shared.shift()) await runFile(file);
  }),
);

mkdirSync('.tmp', { recursive: true });
writeFileSync(timingsFile, `${JSON.stringify({ ...previous, ...durations }, null, 1)}\n`);
const slowest = Object.entries(durations)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 10);
process.stdout.write(
  `\nslowest files (${files.length} files, ${slots} slot${slots === 1 ? '' : 's'}, ${Math.round((Date.now() - started) / 1000)} s in all):\n`,
);
for (const [file, ms] of slowest) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}\n`);
if (failedFiles.length > 0) {
  process.stdout.write(`\nwhy they failed, as each file reported it:\n${failureDigests.join('\n\n')}\n`);
  process.stdout.write(`\nfiles with failures:\n${failedFiles.map((f) => `  ${f}`).join('\n')}\n`);
}
process.stdout.write(`\n${counters.map((c) => `ℹ ${c} ${totals[c]}`).join('\n')}\nℹ duration_ms ${Date.now() - started}\n`);
process.stdout.write(`${totals.pass} passed, ${totals.fail} failed\n`);
process.exit(failedFiles.length > 0 || totals.fail > 0 ? 1 : 0);
