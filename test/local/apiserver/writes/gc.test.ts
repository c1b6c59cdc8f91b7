import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeRequest, startTestApiServer, type TestApiServer } from '../../../support/kube.js';

function codeOf(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('API server stand-in: finalizers, garbage collection and namespace deletion', () => {
  let server: TestApiServer;
  let core: k8s.CoreV1Api;

  const exists = async (name: string, namespace = 'default'): Promise<boolean> => {
    try {
      await core.readNamespacedConfigMap({ name, namespace });
      return true;
    } catch (err) {
      if (codeOf(err) === 404) return false;
      throw err;
    }
  };

  const namespaceGone = (name: string): Promise<void> =>
    eventually(async () => {
      try {
        await core.readNamespace({ name });
        return false;
      } catch (err) {
        return codeOf(err) === 404;
      }
    }, `namespace ${name} removed`);

  const owned = async (name: string, owner: k8s.V1ConfigMap, extra: Partial<k8s.V1OwnerReference> = {}): Promise<k8s.V1ConfigMap> =>
    core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata!.name!, uid: owner.metadata!.uid!, ...extra }] },
      },
    });

  before(async () => {
    server = await startTestApiServer();
    core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  });
  after(() => server.close());

  it('holds an object with finalizers until the last one is removed', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fin', finalizers: ['example.com/a', 'example.com/b'] } } });
    // Raw request: client-node decodes DELETE answers as V1Status and would drop the object's fields.
    const res = await kubeRequest(server, 'DELETE', '/api/v1/namespaces/default/configmaps/fin');
    assert.equal(res.status, 200);
    const deleting = res.body as k8s.V1ConfigMap;
    assert.ok(deleting.metadata?.deletionTimestamp);
    assert.equal(deleting.metadata?.deletionGracePeriodSeconds, 0);
    const current = await core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' });
    const added = await kubeRequest(server, 'PUT', '/api/v1/namespaces/default/configmaps/fin', {
      body: { ...current, metadata: { ...current.metadata, finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } },
    });
    assert.equal(added.status, 422);
    assert.match(String((added.body as { message: string }).message), /no new finalizers can be added if the object is being deleted/);
    // Data edits are still allowed while deleting.
    await core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: [{ op: 'add', path: '/data', value: { still: 'editable' } }] });
    await core.patchNamespacedConfigMap({
      name: 'fin',
      namespace: 'default',
      body: [{ op: 'replace', path: '/metadata/finalizers', value: ['example.com/b'] }],
    });
    assert.equal(await exists('fin'), true);
    await core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    assert.equal(await exists('fin'), false);
  });

  it('deletes dependents in the background once the owner is gone', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'bg-owner' } } });
    await owned('bg-dep-1', owner);
    await owned('bg-dep-2', owner);
    await core.deleteNamespacedConfigMap({ name: 'bg-owner', namespace: 'default' });
    assert.equal(await exists('bg-owner'), false, 'background deletion removes the owner at once');
    await eventually(async () => !(await exists('bg-dep-1')) && !(await exists('bg-dep-2')), 'dependents collected');
  });

  it('keeps a dependent that still has a live owner, dropping the dead reference', async () => {
    const a = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'multi-a' } } });
    const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'multi-b' } } });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: {
          name: 'multi-dep',
          ownerReferences: [a, b].map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata!.name!, uid: o.metadata!.uid! })),
        },
      },
    });
    await core.deleteNamespacedConfigMap({ name: 'multi-a', namespace: 'default' });
    await eventually(
      async () => (await core.readNamespacedConfigMap({ name: 'multi-dep', namespace: 'default' })).metadata?.ownerReferences?.length === 1,
      'dead reference dropped',
    );
    assert.equal(await exists('multi-dep'), true);
  });

  it('deletes in the foreground: the owner waits for blocking dependents', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fg-owner' } } });
    await owned('fg-dep', owner, { blockOwnerDeletion: true });
    // The dependent's own finalizer keeps it (and so the owner) around for a while.
    await core.patchNamespacedConfigMap({
      name: 'fg-dep',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/slow'] }],
    });
    const res = await kubeRequest(server, 'DELETE', '/api/v1/namespaces/default/configmaps/fg-owner', { body: { propagationPolicy: 'Foreground' } });
    const pending = res.body as k8s.V1ConfigMap;
    assert.ok(pending.metadata?.finalizers?.includes('foregroundDeletion'));
    await eventually(
      async () => Boolean((await core.readNamespacedConfigMap({ name: 'fg-dep', namespace: 'default' })).metadata?.deletionTimestamp),
      'dependent marked for deletion',
    );
    assert.equal(await exists('fg-owner'), true, 'owner waits for its blocking dependent');
    await core.patchNamespacedConfigMap({ name: 'fg-dep', namespace: 'default', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await eventually(async () => !(await exists('fg-owner')), 'owner removed after dependents');
    assert.equal(await exists('fg-dep'), false);
  });

  it('orphans dependents when asked', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'orphan-owner' } } });
    await owned('orphan-dep', owner);
    await core.deleteNamespacedConfigMap({ name: 'orphan-owner', namespace: 'default', propagationPolicy: 'Orphan' });
    await eventually(async () => !(await exists('orphan-owner')), 'owner removed');
    const dep = await core.readNamespacedConfigMap({ name: 'orphan-dep', namespace: 'default' });
    assert.equal(dep.metadata?.ownerReferences, undefined);
  });

  it('collects across kinds (a Deployment owning a ConfigMap)', async () => {
    const apps = server.kubeConfig.makeApiClient(k8s.AppsV1Api);
    const dep = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      },
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: {
          name: 'web-config',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: dep.metadata!.uid!, controller: true }],
        },
      },
    });
    await apps.deleteNamespacedDeployment({ name: 'web', namespace: 'default' });
    await eventually(async () => !(await exists('web-config')), 'configmap owned by the deployment collected');
  });

  it('deletes pods of a terminating namespace gracefully, leaving the kill to the node', async () => {
    await core.createNamespace({ body: { metadata: { name: 'with-pods' } } });
    await core.createNamespacedPod({
      namespace: 'with-pods',
      body: { metadata: { name: 'bound' }, spec: { nodeName: 'local', containers: [{ name: 'c', image: 'x' }] } },
    });
    await core.createNamespacedPod({ namespace: 'with-pods', body: { metadata: { name: 'unbound' }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
    await kubeRequest(server, 'DELETE', '/api/v1/namespaces/with-pods');
    await eventually(
      async () => Boolean((await core.readNamespacedPod({ name: 'bound', namespace: 'with-pods' })).metadata?.deletionTimestamp),
      'bound pod terminating',
    );
    await assert.rejects(core.readNamespacedPod({ name: 'unbound', namespace: 'with-pods' }), (e) => codeOf(e) === 404);
    assert.equal((await core.readNamespace({ name: 'with-pods' })).status?.phase, 'Terminating');
    // The node agent's part: after stopping the containers it deletes with grace 0.
    await core.deleteNamespacedPod({ name: 'bound', namespace: 'with-pods', gracePeriodSeconds: 0 });
    await namespaceGone('with-pods');
  });

  it('terminates a namespace: Terminating, contents removed, then the namespace', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'inside' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    const ns = (await kubeRequest(server, 'DELETE', '/api/v1/namespaces/doomed')).body as k8s.V1Namespace;
    assert.equal(ns.status?.phase, 'Terminating');
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }), (e) => codeOf(e) === 403);
    await eventually(async () => !(await exists('inside', 'doomed')), 'contents deleted');
    assert.equal((await core.readNamespace({ name: 'doomed' })).status?.phase, 'Terminating', 'waits for finalizers of its contents');
    await core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await namespaceGone('doomed');
  });
});
