import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../../lib/log.js';
import { databaseCrd } from '../../../../api/crd/database-crd.js';
import { KubeManagedReads } from '../../../../sidecar/ha-node/managed/kube-reads.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { eventually } from '../../../operator/support.js';

/**
 * ha-node's two Kubernetes reads against the stand-in API server with the generated Database CRD:
 * a basic-auth Secret's password (or why there is none), the Database objects of this cluster
 * only, and the watch that wakes the loop when one of them changes.
 */
describe('managed roles and databases: the Kubernetes reads', () => {
  const namespace = 'default';
  let server: TestApiServer;
  let reads: KubeManagedReads;
  let changes = 0;

  before(async () => {
    server = await startTestApiServer();
    const apiext = server.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
    await apiext.createCustomResourceDefinition({ body: databaseCrd() });
    const custom = server.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    await eventually('the Database kind served', async () => {
      await custom.listNamespacedCustomObject({ group: 'keelson.io', version: 'v1', namespace, plural: 'databases' });
      return true;
    });
    reads = new KubeManagedReads(server.kubeConfig, namespace, 'mine', { onChange: () => changes++, logger: createLogger({ name: 'reads', level: 'silent' }) });
  });
  after(async () => {
    reads?.stop();
    await server?.close();
  });

  const core = () => server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  const database = (name: string, cluster: string) =>
    server.kubeConfig.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
      group: 'keelson.io',
      version: 'v1',
      namespace,
      plural: 'databases',
      body: { apiVersion: 'keelson.io/v1', kind: 'Database', metadata: { name }, spec: { cluster, name: name.replace(/-/g, '_'), owner: 'app' } },
    });

  it('reads a basic-auth Secret’s password, and says why when it cannot', async () => {
    await core().createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'alice-pw' }, type: 'kubernetes.io/basic-auth', stringData: { username: 'alice', password: 's3cret' } },
    });
    await core().createNamespacedSecret({ namespace, body: { metadata: { name: 'opaque' }, stringData: { password: 'x' } } });
    const good = await reads.secret('alice-pw', 'alice');
    assert.deepEqual(good.password, { password: 's3cret' });
    assert.ok(good.resourceVersion);
    assert.deepEqual((await reads.secret('alice-pw', 'bob')).password, { problem: 'Secret "alice-pw" is for user "alice", not for role "bob"' });
    assert.deepEqual((await reads.secret('opaque', 'alice')).password, { problem: 'Secret "opaque" must be of type kubernetes.io/basic-auth (it is Opaque)' });
    assert.deepEqual((await reads.secret('missing', 'alice')).password, { problem: 'Secret "missing" not found' });
  });

  it('lists only this cluster’s Databases, and the watch wakes the loop for a new one of them only', async () => {
    await database('shop-db', 'mine');
    await database('theirs-db', 'other');
    const first = await reads.databases();
    assert.deepEqual(
      first.objects.map((o) => [o.metadata.name, o.spec.name, o.spec.reclaimPolicy]),
      [['shop-db', 'shop_db', 'retain']],
    );
    // The first call started the watch; once it runs, a new Database of this cluster wakes the loop.
    await eventually(
      'the watch answers from its cache',
      async () => {
        const before = changes;
        await database(`probe-${before}`, 'mine');
        return eventually('a wake', async () => changes > before, 5_000).catch(() => false);
      },
      20_000,
    );
    const woken = changes;
    await database('other-2', 'other');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(changes, woken, 'another cluster’s Database wakes nothing');
    const names = (await reads.databases()).objects.map((o) => o.metadata.name);
    assert.ok(names.includes('shop-db') && !names.includes('theirs-db') && !names.includes('other-2'));
  });
});
