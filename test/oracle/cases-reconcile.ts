/**
 * What an operator's reconcile loop meets: a watch without a resourceVersion (initial ADDED
 * events), watch timeouts, server-side apply of status, and the immutable RoleBinding roleRef.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GROUP, widgetPath } from './cases-crd.js';
import { cmPath, NS, type CaseModule } from './context.js';
import { kubeJson, openWatch } from '../support/kube.js';

export const reconcileCases: CaseModule = (ctx) => {
  it('a watch without resourceVersion starts with ADDED for every existing match', async () => {
    const { server } = ctx();
    for (const name of ['init-1', 'init-2']) await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name, labels: { init: 'yes' } } } });
    const watch = await openWatch(server, `${cmPath()}?watch=1&labelSelector=init%3Dyes`);
    try {
      await watch.waitFor(2);
      assert.deepEqual(watch.events.map((e) => [e.type, e.object.metadata?.name]).sort(), [
        ['ADDED', 'init-1'],
        ['ADDED', 'init-2'],
      ]);
      await kubeJson(server, 'DELETE', cmPath('init-1'));
      await watch.waitFor(3);
      assert.deepEqual([watch.events[2].type, watch.events[2].object.metadata?.name], ['DELETED', 'init-1']);
    } finally {
      watch.stop();
    }
  });

  it('timeoutSeconds ends a watch cleanly', async () => {
    const { server } = ctx();
    const list = await kubeJson(server, 'GET', cmPath());
    const started = Date.now();
    const watch = await openWatch(
      server,
      `${cmPath()}?watch=1&timeoutSeconds=1&resourceVersion=${(list.body.metadata as { resourceVersion: string }).resourceVersion}`,
    );
    await watch.ended;
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 10_000, `ended after ${elapsed} ms`);
    assert.equal(watch.events.filter((e) => e.type !== 'BOOKMARK').length, 0);
  });

  it('server-side apply of a custom resource status through /status', async () => {
    const { server } = ctx();
    // The CRD comes from the custom-resource cases, which run earlier.
    const created = await kubeJson(server, 'POST', widgetPath(), {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-ssa-status' }, spec: { instances: 1 } },
    });
    assert.equal(created.status, 201, created.text);
    const applied = await kubeJson(server, 'PATCH', `${widgetPath('w-ssa-status/status')}?fieldManager=keelson-operator&force=true`, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-ssa-status', namespace: NS }, status: { phase: 'Ready', instances: 1 } },
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual(applied.body.status, { phase: 'Ready', instances: 1 });
    const managers = (applied.body.metadata as { managedFields?: Array<{ manager: string; operation: string }> }).managedFields ?? [];
    // Both record the applier (was difference D4), so a second status applier meets a conflict.
    assert.ok(
      managers.some((m) => m.manager === 'keelson-operator' && m.operation === 'Apply'),
      JSON.stringify(managers),
    );
    const rival = await kubeJson(server, 'PATCH', `${widgetPath('w-ssa-status/status')}?fieldManager=other-controller`, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-ssa-status', namespace: NS }, status: { phase: 'Failed' } },
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(rival.status, 409, rival.text);
    assert.match(String(rival.body.message), /conflict with "keelson-operator"/);
  });

  it('a RoleBinding roleRef cannot change (422); subjects can', async () => {
    const { server } = ctx();
    const path = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`;
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'rb' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'a', namespace: NS }],
    };
    assert.equal((await kubeJson(server, 'POST', path, { body: binding })).status, 201);
    const roleRef = await kubeJson(server, 'PATCH', `${path}/rb`, { body: { roleRef: { name: 'writer' } }, contentType: 'application/merge-patch+json' });
    // Both refuse (was difference D5): a binding must be deleted and recreated to name another role.
    assert.equal(roleRef.status, 422);
    assert.match(String(roleRef.body.message), /roleRef: Invalid value: .*: cannot change roleRef/);
    const subjects = await kubeJson(server, 'PATCH', `${path}/rb`, {
      body: { subjects: [{ kind: 'ServiceAccount', name: 'b', namespace: NS }] },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(subjects.status, 200);
  });
};
