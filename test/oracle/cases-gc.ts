/** ownerReference garbage collection (background, foreground, orphan) and namespace deletion. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type CaseModule, cmPath, eventually } from './context.js';
import type { ContractServer } from './targets.js';
import { kubeJson } from '../support/kube.js';

async function ownerWithDependent(server: ContractServer, owner: string, dependent: string): Promise<void> {
  const created = await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: owner } } });
  assert.equal(created.status, 201);
  const uid = (created.body.metadata as { uid: string }).uid;
  const dep = await kubeJson(server, 'POST', cmPath(), {
    body: { metadata: { name: dependent, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid, blockOwnerDeletion: true }] } },
  });
  assert.equal(dep.status, 201, dep.text);
}

/** Creates PREFIX-owner with dependent PREFIX-dep, then deletes the owner with the policy (200). */
async function deleteOwner(server: ContractServer, prefix: string, propagationPolicy: string) {
  await ownerWithDependent(server, `${prefix}-owner`, `${prefix}-dep`);
  const del = await kubeJson(server, 'DELETE', cmPath(`${prefix}-owner`), { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy } });
  assert.equal(del.status, 200, del.text);
  return del;
}

const absent = (server: ContractServer, name: string) => async () => ((await kubeJson(server, 'GET', cmPath(name))).status === 404 ? true : undefined);

// The real garbage collector first syncs its informers; 60 s leaves room on a loaded machine.
const GC_WAIT_MS = 60_000;

export const gcCases: CaseModule = (ctx) => {
  it('background deletion removes dependents after the owner', async () => {
    const { server } = ctx();
    await deleteOwner(server, 'gc-bg', 'Background');
    assert.equal((await kubeJson(server, 'GET', cmPath('gc-bg-owner'))).status, 404);
    await eventually('dependent collected', absent(server, 'gc-bg-dep'), GC_WAIT_MS);
  });

  it('foreground deletion keeps the owner (foregroundDeletion finalizer) until dependents are gone', async () => {
    const { server } = ctx();
    const del = await deleteOwner(server, 'gc-fg', 'Foreground');
    const meta = (del.body.metadata ?? {}) as { finalizers?: string[]; deletionTimestamp?: string };
    assert.deepEqual(meta.finalizers, ['foregroundDeletion']);
    assert.ok(meta.deletionTimestamp);
    await eventually('dependent collected', absent(server, 'gc-fg-dep'), GC_WAIT_MS);
    await eventually('owner removed', absent(server, 'gc-fg-owner'), GC_WAIT_MS);
  });

  it('orphan deletion strips the ownerReference and keeps the dependent', async () => {
    const { server } = ctx();
    await deleteOwner(server, 'gc-or', 'Orphan');
    await eventually('owner removed', absent(server, 'gc-or-owner'), GC_WAIT_MS);
    const dep = await kubeJson(server, 'GET', cmPath('gc-or-dep'));
    assert.equal(dep.status, 200);
    assert.equal((dep.body.metadata as { ownerReferences?: unknown[] }).ownerReferences, undefined);
  });

  it('namespace deletion goes through Terminating, empties the namespace, then removes it', async () => {
    const { server } = ctx();
    assert.equal((await kubeJson(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'contract-doomed' } } })).status, 201);
    assert.equal((await kubeJson(server, 'POST', '/api/v1/namespaces/contract-doomed/configmaps', { body: { metadata: { name: 'inside' } } })).status, 201);
    // A finalizer keeps the namespace Terminating until this test releases it.
    const held = '/api/v1/namespaces/contract-doomed/configmaps/held';
    assert.equal(
      (
        await kubeJson(server, 'POST', '/api/v1/namespaces/contract-doomed/configmaps', {
          body: { metadata: { name: 'held', finalizers: ['keelson.io/hold'] } },
        })
      ).status,
      201,
    );
    const del = await kubeJson(server, 'DELETE', '/api/v1/namespaces/contract-doomed');
    assert.equal(del.status, 200);
    assert.equal((del.body.status as { phase: string }).phase, 'Terminating');
    assert.ok((del.body.metadata as { deletionTimestamp?: string }).deletionTimestamp);
    const refused = await kubeJson(server, 'POST', '/api/v1/namespaces/contract-doomed/configmaps', { body: { metadata: { name: 'late' } } });
    assert.equal(refused.status, 403);
    assert.match(String(refused.body.message), /because it is being terminated/);
    await eventually(
      'the namespace emptied except the held object',
      async () => {
        const inside = await kubeJson(server, 'GET', '/api/v1/namespaces/contract-doomed/configmaps/inside');
        const heldObject = await kubeJson(server, 'GET', held);
        return inside.status === 404 && (heldObject.body.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp ? true : undefined;
      },
      GC_WAIT_MS,
    );
    const stillThere = await kubeJson(server, 'GET', '/api/v1/namespaces/contract-doomed');
    assert.equal((stillThere.body.status as { phase: string }).phase, 'Terminating');
    const release = await kubeJson(server, 'PATCH', held, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    assert.equal(release.status, 200, release.text);
    await eventually(
      'namespace removed',
      async () => ((await kubeJson(server, 'GET', '/api/v1/namespaces/contract-doomed')).status === 404 ? true : undefined),
      GC_WAIT_MS,
    );
    assert.equal((await kubeJson(server, 'GET', '/api/v1/namespaces/contract-doomed/configmaps/inside')).status, 404);
  });
};
