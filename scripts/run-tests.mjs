#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner and the tsx loader.
// Node 20's --test does not expand globs, so the file list is built here.
// Usage: npm test [-- <path filter> ...]   e.g. npm test -- test/lib test/sidecar/exporter
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

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
const concurrency = process.env.TEST_CONCURRENCY ?? '1';
// --test-force-exit: a file whose suite timed out must not keep the run waiting on open handles.
const args = ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
