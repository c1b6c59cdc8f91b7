import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { kubectl } from '../operator/support.js';
import { renderChart } from './render.js';

/** The rendered chart goes through real kubectl into the API server stand-in, as `helm template | kubectl apply -f -` would. */
describe('charts/keelson applied with kubectl', () => {
  let server: TestApiServer;
  let dir: string;

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-chart-apply-'));
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates every object, then re-applies as unchanged (CRD included)', async () => {
    const values = { admin: { enabled: true, existingSecret: 'keelson-admin-env', secretKey: 'chart-apply-secret-key-0123' }, operator: { watchNamespaces: ['default'] }, crds: { keep: false } };
    // Hooks (the helm test Pod) are Helm's to run, left out as `helm template --skip-tests` does.
    const docs = renderChart(values).filter((doc) => !doc.metadata.annotations?.['helm.sh/hook']);
    const file = join(dir, 'chart.yaml');
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'keelson-system' } };
    writeFileSync(file, [namespace, ...docs].map((doc) => stringify(doc, { version: '1.1' })).join('---\n'));
    const cache = join(dir, 'kcache');
    const first = await kubectl(server.kubeconfigPath, cache, 'apply', '-f', file);
    const created = first.trim().split('\n');
    assert.equal(created.length, docs.length + 1);
    assert.ok(created.every((line) => line.endsWith(' created')), first);
    const second = await kubectl(server.kubeconfigPath, cache, 'apply', '-f', file);
    // kubectl's own patch for a PodDisruptionBudget always carries the selector (patchStrategy
    // "replace" in its Go type), so it reports "configured"; the object itself stays as it was.
    const pdb = 'poddisruptionbudget.policy/keelson-operator';
    assert.ok(second.trim().split('\n').every((line) => line.endsWith(' unchanged') || line === `${pdb} configured`), second);
    assert.equal(await kubectl(server.kubeconfigPath, cache, 'get', '-n', 'keelson-system', 'pdb', 'keelson-operator', '-o', 'jsonpath={.metadata.generation}'), '1');
    const crd = await kubectl(server.kubeconfigPath, cache, 'get', 'crd', 'databaseclusters.keelson.io', '-o', 'jsonpath={.spec.names.shortNames[0]}');
    assert.equal(crd, 'dbc');
  });
});
