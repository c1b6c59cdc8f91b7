import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import ts from 'typescript';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Loads the given modules in a fresh Node process and reports what came with them. */
async function loadedBy(modules: string[], afterwards = ''): Promise<{ undici: boolean; express: boolean; yaml: boolean; navigator: string }> {
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
    }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot });
  return JSON.parse(stdout) as { undici: boolean; express: boolean; yaml: boolean; navigator: string };
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
      if (imported.fileName.startsWith('.') && imported.fileName.endsWith('.js')) pending.push(relative(repoRoot, resolve(repoRoot, dirname(file), imported.fileName.replace(/\.js$/, '.ts'))));
    }
    const { outputText } = ts.transpileModule(source, { fileName: file, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } });
    mkdirSync(dirname(join(out, file)), { recursive: true });
    writeFileSync(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  return out;
}

// What the exporter process loads is most of its memory above a bare Node process.
describe('exporter process footprint', () => {
  it('loads neither express nor Node’s fetch stack (undici) for serving metrics', async () => {
    const loaded = await loadedBy([resolve(repoRoot, 'sidecar/exporter/run.ts'), resolve(repoRoot, 'sidecar/exporter/routes.ts')]);
    assert.equal(loaded.express, false, 'express loaded by the exporter run path');
    // The built-in collector set and the StatefulSet's arguments read no YAML file.
    assert.equal(loaded.yaml, false, 'the YAML parser loaded by the exporter run path');
    // Node 22+ loads its internal undici when node:http is imported as an ES module (its namespace
    // reads the lazy exports), not when it is required: lib/httpserver.ts requires it.
    assert.equal(loaded.undici, false, 'undici loaded by the exporter run path');
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

  it('the entry point sets the exporter\'s compiler flags before the rest of the program loads: loading it optimises nothing more', async () => {
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
      const floor = new Set(await optimised('lib/cli/exporter-early-flags.js', ['exporter']));
      const program = await optimised('bin/keelson.js', ['exporter', '--dry-run']);
      assert.deepEqual(program.filter((name) => !floor.has(name)), [], `optimised beyond what loading the flags module does (${[...floor].join(', ') || 'nothing'})`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
