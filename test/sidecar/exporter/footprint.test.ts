import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

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

// What the exporter process loads is most of its memory above a bare Node process.
describe('exporter process footprint', () => {
  it('loads neither express nor Node’s fetch stack (undici) for serving metrics', async () => {
    const loaded = await loadedBy([resolve(repoRoot, 'sidecar/exporter/run.ts'), resolve(repoRoot, 'sidecar/exporter/routes.ts')]);
    assert.equal(loaded.express, false, 'express loaded by the exporter run path');
    // The built-in collector set and the StatefulSet's arguments read no YAML file.
    assert.equal(loaded.yaml, false, 'the YAML parser loaded by the exporter run path');
    // Node 22+ loads its internal undici with node:http itself; what counts is that the exporter adds none.
    const floor = await loadedBy(['node:http']);
    assert.equal(loaded.undici, floor.undici, 'undici loaded by the exporter run path beyond what node:http loads');
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
});
