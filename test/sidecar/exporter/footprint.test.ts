import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { exporterNodeOptions } from '../../../api/exporter/node-options.js';
import { startPostgres } from '../../support/postgres.js';
import { freePort, waitForPort } from '../../support/ports.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

async function waitForReport(file: string): Promise<string[]> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as string[]).filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`no module report in ${file}`);
}

/** Loads the given modules in a fresh Node process and reports what came with them. */
interface Loaded {
  undici: boolean;
  express: boolean;
  yaml: boolean;
  navigator: string;
  /** Node's built-in modules loaded (process.moduleLoadList, without the "NativeModule " prefix). */
  builtins: string[];
}

async function loadedBy(modules: string[], afterwards = ''): Promise<Loaded> {
  const script = `
    const loaded = [];
    for (const m of ${JSON.stringify(modules)}) loaded.push(await import(m));
    ${afterwards}
    const { createRequire } = await import('node:module');
    const cache = Object.keys(createRequire(import.meta.url).cache);
    process.stdout.write(JSON.stringify({
      undici: process.moduleLoadList.some((m) => m.includes('undici')),
      express: cache.some((k) => k.includes('/node_modules/express/')),
      yaml: cache.some((k) => k.includes('/node_modules/yaml/')),
      navigator: typeof globalThis.navigator,
      builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length)),
    }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot });
  return JSON.parse(stdout) as Loaded;
}

/**
 * Emits JavaScript, as the image's build does, for every module reachable from the entry point by
 * relative imports (static or dynamic), into a folder that also holds package.json and node_modules.
 */
function emitProgram(entry: string): string {
  const out = mkdtempSync(join(tmpdir(), 'keelson-entry-'));
  copyFileSync(resolve(repoRoot, 'package.json'), join(out, 'package.json'));
  symlinkSync(resolve(repoRoot, 'node_modules'), join(out, 'node_modules'), 'dir');
  const pending = [entry];
  const seen = new Set<string>();
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(resolve(repoRoot, file), 'utf8');
    for (const imported of ts.preProcessFile(source, true, true).importedFiles) {
      if (imported.fileName.startsWith('.') && imported.fileName.endsWith('.js'))
        pending.push(relative(repoRoot, resolve(repoRoot, dirname(file), imported.fileName.replace(/\.js$/, '.ts'))));
    }
    const { outputText } = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    mkdirSync(dirname(join(out, file)), { recursive: true });
    writeFileSync(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  return out;
}

// What the exporter process loads is most of its memory above a bare Node process.
describe('exporter process footprint', () => {
  it('loads neither express nor Node’s fetch stack (undici) for serving metrics', async () => {
    const loaded = await loadedBy([resolve(repoRoot, 'sidecar/exporter/run.ts'), resolve(repoRoot, 'sidecar/exporter/http/routes.ts')]);
    assert.equal(loaded.express, false, 'express loaded by the exporter run path');
    // The built-in collector set and the StatefulSet's arguments read no YAML file.
    assert.equal(loaded.yaml, false, 'the YAML parser loaded by the exporter run path');
    // Node 22+ loads its internal undici when node:http is imported as an ES module (its namespace
    // reads the lazy exports), not when it is required: lib/httpserver.ts requires it.
    assert.equal(loaded.undici, false, 'undici loaded by the exporter run path');
  });

  it('serves metrics as its containers run it (NODE_OPTIONS as built) without loading TLS, fs/promises or perf_hooks', async () => {
    // Each costs resident memory on Node 24 (tls with https ≈ 7 MB, fs/promises with readline
    // ≈ 1 MB, perf_hooks ≈ 0.5 MB): https is required only for a TLS listener, node:fs is
    // required rather than imported (an imported namespace reads the lazy `promises`), and
    // durations come from process.hrtime rather than the global `performance`. The program runs
    // compiled, as in the image: tsx itself would load some of these.
    const out = emitProgram('bin/keelson.ts');
    const db = await startPostgres();
    // Test instrumentation only: a preload that writes the built-in modules loaded so far on SIGUSR2.
    const report = join(out, 'loaded.json');
    writeFileSync(
      join(out, 'report.cjs'),
      `process.on('SIGUSR2', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));`,
    );
    const port = await freePort();
    const env = { ...process.env, NODE_OPTIONS: exporterNodeOptions, PG_EXPORTER_URL: db.url, LOG_LEVEL: 'error' };
    const child = spawn(
      process.execPath,
      ['--require', join(out, 'report.cjs'), join(out, 'bin/keelson.js'), 'exporter', '--web.listen-address', `127.0.0.1:${port}`, '--disable-cache'],
      { cwd: out, env, stdio: 'ignore' },
    );
    try {
      await waitForPort('127.0.0.1', port, 30_000);
      for (let i = 0; i < 3; i++) {
        const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        assert.match(body, /^pg_up 1$/m, 'the exporter reads PostgreSQL (SCRAM login) with the built NODE_OPTIONS');
      }
      assert.equal((await fetch(`http://127.0.0.1:${port}/version`)).status, 200);
      child.kill('SIGUSR2');
      const builtins = await waitForReport(report);
      for (const unwanted of ['tls', 'https', 'internal/fs/promises', 'perf_hooks', 'internal/deps/undici/undici'])
        assert.ok(!builtins.includes(unwanted), `${unwanted} loaded by the exporter`);
    } finally {
      child.kill('SIGKILL');
      await db.stop();
      rmSync(out, { recursive: true, force: true });
    }
    // A TLS listener still gets https, only when it asks.
    const withTls = await loadedBy([resolve(repoRoot, 'lib/builtins.ts')], 'loaded[0].https();');
    assert.ok(withTls.builtins.includes('https') && withTls.builtins.includes('tls'));
  });

  it('loads the built-in collector set without the YAML parser', async () => {
    const loaded = await loadedBy([resolve(repoRoot, 'sidecar/exporter/run.ts')], 'loaded[0].collectorLoader(undefined)();');
    assert.equal(loaded.yaml, false, 'the YAML parser loaded to read the built-in set');
  });

  it('pg through lib/pg.ts leaves no navigator stand-in behind and pulls in no undici', async () => {
    const loaded = await loadedBy([resolve(repoRoot, 'lib/pg.ts')]);
    assert.equal(loaded.undici, false);
    assert.equal(loaded.navigator, process.versions.node.split('.')[0] >= '21' ? 'object' : 'undefined');
  });

  it("the entry point sets the exporter's compiler flags before the rest of the program loads: loading it optimises nothing more", async () => {
    // Node resolves a module's whole static import graph before it runs any of it. Resolving the
    // program's ~100 modules before the flags are set makes Node's resolver code hot enough for
    // TurboFan, whose code and zones then stay resident (~4 MB) in a process that runs for months.
    // What Node optimises while it loads the flags module itself is the floor (Maglev compiles
    // two path helpers on Node 24 at that point).
    const out = emitProgram('bin/keelson.ts');
    const optimised = async (script: string, args: string[]): Promise<string[]> => {
      const env = { ...process.env, NODE_OPTIONS: '', LOG_LEVEL: 'error' };
      const { stdout } = await promisify(execFile)(process.execPath, ['--trace-opt', join(out, script), ...args], { cwd: out, env, maxBuffer: 16 << 20 });
      return [...stdout.matchAll(/^\[marking \S+ <JSFunction (\S+)/gm)].map((m) => m[1]);
    };
    try {
      const floor = new Set(await optimised('bin/exporter-early-flags.js', ['exporter']));
      const program = await optimised('bin/keelson.js', ['exporter', '--dry-run']);
      assert.deepEqual(
        program.filter((name) => !floor.has(name)),
        [],
        `optimised beyond what loading the flags module does (${[...floor].join(', ') || 'nothing'})`,
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
