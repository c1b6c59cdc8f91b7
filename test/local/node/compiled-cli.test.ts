import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compiledCacheDir, compiledCliArgv, containerCliArgv, ensureCompiledCli, loadTranspiler } from '../../../local/node/compiled-cli.js';
import { findRepositoryRoot } from '../../../local/node/images.js';
import { capturedLogger } from '../../support/log-lines.js';

const run = promisify(execFile);
const transpiler = loadTranspiler();

/** A tiny repository: a CLI that imports a library module (with a type-only import esbuild must drop). */
function fakeRepository(): string {
  const root = mkdtempSync(join(tmpdir(), 'keelson-compiled-cli-'));
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'lib'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fake', type: 'module' }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', verbatimModuleSyntax: true } }));
  writeFileSync(join(root, 'lib', 'greeting.ts'), "export interface Greeting { text: string }\nexport const greeting: Greeting = { text: 'hello' };\n");
  writeFileSync(
    join(root, 'bin', 'keelson.ts'),
    "import { greeting, type Greeting } from '../lib/greeting.js';\nconst g: Greeting = greeting;\nconsole.log(g.text, process.argv.slice(2).join(' '));\n",
  );
  return root;
}

test(
  'the sources compile once per content hash into a folder one level below the root, and run with plain node',
  { skip: !transpiler && 'esbuild is not installed' },
  async () => {
    const root = fakeRepository();
    try {
      const first = await ensureCompiledCli(root, transpiler!);
      assert.equal(first.compiled, true);
      assert.equal(first.entry, join(root, compiledCacheDir, first.hash, 'bin', 'keelson.js'));
      assert.equal((await run(process.execPath, [first.entry, 'ha-node'])).stdout, 'hello ha-node\n');

      const again = await ensureCompiledCli(root, transpiler!);
      assert.deepEqual([again.compiled, again.hash], [false, first.hash], 'an unchanged tree reuses its build');

      writeFileSync(join(root, 'lib', 'greeting.ts'), "export interface Greeting { text: string }\nexport const greeting: Greeting = { text: 'changed' };\n");
      const changed = await ensureCompiledCli(root, transpiler!);
      assert.notEqual(changed.hash, first.hash, 'an edited source never runs the old build');
      assert.equal((await run(process.execPath, [changed.entry])).stdout, 'changed \n');
      assert.deepEqual(
        readdirSync(join(root, compiledCacheDir)).filter((name) => name.startsWith('.')),
        [],
        'no staging folder is left behind',
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test('stacks compiling the same tree side by side all get a whole build', { skip: !transpiler && 'esbuild is not installed' }, async () => {
  const root = fakeRepository();
  try {
    // Each build writes to a folder of its own: one finishing must not move or remove another's output.
    const outdirs: unknown[] = [];
    const recording = { version: transpiler!.version, build: (options: Record<string, unknown>) => (outdirs.push(options.outdir), transpiler!.build(options)) };
    const builds = await Promise.all([1, 2, 3].map(() => ensureCompiledCli(root, recording)));
    assert.equal(new Set(outdirs).size, 3, `staging folders: ${outdirs.join(', ')}`);
    assert.equal(new Set(builds.map((b) => b.entry)).size, 1);
    assert.equal((await run(process.execPath, [builds[0]!.entry])).stdout, 'hello \n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** Log lines reach the capture stream asynchronously: wait (bounded) for the one expected. */
async function logged(lines: Record<string, unknown>[], match: (line: Record<string, unknown>) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!lines.some(match)) {
    if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(lines)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('without a transpiler, or when the compile fails, containers start through the fallback and a warning says why', async () => {
  const root = fakeRepository();
  try {
    const fallback = [process.execPath, '--import', 'tsx', join(root, 'bin', 'keelson.ts')];
    const missing = capturedLogger();
    assert.deepEqual(await compiledCliArgv(root, fallback, missing.logger, () => undefined), fallback);
    await logged(missing.lines, (l) => l.level === 'warn' && /through tsx/.test(String(l.msg)), 'a warning names the fallback');

    const failing = capturedLogger();
    const broken = { version: '0', build: () => Promise.reject(new Error('syntax error in lib/greeting.ts')) };
    assert.deepEqual(await compiledCliArgv(root, fallback, failing.logger, () => broken), fallback);
    await logged(failing.lines, (l) => l.level === 'warn' && /compiling the sources failed/.test(String(l.msg)), 'a warning says the compile failed');
    assert.equal(existsSync(join(root, compiledCacheDir, '0')), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test(
  'from the sources, keelson containers run this repository compiled, and it knows its own version',
  { skip: !transpiler && 'esbuild is not installed' },
  async () => {
    const root = findRepositoryRoot();
    const { logger } = capturedLogger();
    const argv = await containerCliArgv(logger, root);
    assert.equal(argv.length, 2, 'node and the compiled entry, no --import tsx');
    assert.ok(argv[1]!.startsWith(join(root, compiledCacheDir)));
    const { stdout } = await run(argv[0]!, [argv[1]!, '--version']);
    assert.match(stdout.trim(), /^\d+\.\d+\.\d+/, 'the version comes from the repository package.json two folders up');
    assert.notEqual(stdout.trim(), '0.0.0-unknown');
  },
);
