import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { folderArrows, importCycles, importGraph, type ImportGraph } from './import-graph.js';

/**
 * The house reads bottom-up: lib < api < programs (operator, sidecar/*, admin, local, ctl) < bin.
 * A folder imports only from its own floor's program or the floors below; programs talk through api/.
 * And no module imports itself back through others (docs/adr/0420, docs/adr/0421).
 */

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Program-to-program imports that stay, each with its reason (file → imported file). */
const allowedSideways: Record<string, string> = {
  'local/cluster/stack.ts -> operator/run.ts': 'the local stack runs the operator in its own process, as a program starting another',
  'local/cluster/up.ts -> operator/kube-api.ts': "keelson local up applies the demo DatabaseCluster with the operator's typed client",
  'local/cluster/pooler-wait.ts -> operator/kube-api.ts': "keelson local up waits for the demo's poolers with the same client",
  'local/proxy/slice-source.ts -> operator/capabilities.ts': 'the service proxy asks the API server which discovery APIs it serves, as the operator does',
};

describe('import graph of the sources', () => {
  const graph = importGraph(root);
  const runtime = importGraph(root, { withTypeOnly: false });

  it('reads the sources (a parser that finds nothing would pass everything)', () => {
    assert.ok(graph.size > 300, `${graph.size} files`);
    assert.ok(graph.get('bin/program.ts')?.includes('operator/command.ts'), 'bin/program.ts imports the operator');
    assert.ok(graph.get('operator/builders/configmap.ts')?.includes('api/ha-node/settings-document.ts'), 'type-only imports count');
  });

  it('has no import from a lower floor to a higher one', () => {
    const { upward } = folderArrows(graph);
    assert.deepEqual(
      upward.map((a) => `${a.file} -> ${a.target}`),
      [],
    );
  });

  it('lets programs meet only through api/, except the listed cases', () => {
    const { sideways } = folderArrows(graph);
    const found = sideways.map((a) => `${a.file} -> ${a.target}`);
    assert.deepEqual(
      found.filter((arrow) => !(arrow in allowedSideways)),
      [],
      'import through api/ instead, or list the case with its reason',
    );
    assert.deepEqual(
      Object.keys(allowedSideways).filter((arrow) => !found.includes(arrow)),
      [],
      'an allowance that is no longer needed: remove it',
    );
  });

  it('has no cycle through runtime imports', () => {
    assert.deepEqual(importCycles(runtime), []);
  });

  it('has no cycle through type-only imports either', () => {
    assert.deepEqual(importCycles(graph), []);
  });

  it('detects an upward arrow and a cycle (the checks themselves)', () => {
    const sample: ImportGraph = new Map([
      ['lib/a.ts', ['api/b.ts']],
      ['api/b.ts', ['lib/a.ts']],
      ['operator/c.ts', ['admin/d.ts']],
      ['admin/d.ts', []],
    ]);
    assert.deepEqual(
      folderArrows(sample).upward.map((a) => a.file),
      ['lib/a.ts'],
    );
    assert.deepEqual(
      folderArrows(sample).sideways.map((a) => a.file),
      ['operator/c.ts'],
    );
    assert.deepEqual(importCycles(sample), [['api/b.ts', 'lib/a.ts']]);
  });
});
