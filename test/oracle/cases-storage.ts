/**
 * StorageClasses and what they decide for claims: defaults and immutable fields of a class, the
 * default class a new claim gets (DefaultStorageClass), and which Bound claims may grow
 * (PersistentVolumeClaimResize: only those of a class with allowVolumeExpansion, else 403).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { kubeJson } from '../support/kube.js';
import { NS, type CaseModule } from './context.js';
import type { ContractServer } from './targets.js';

const classes = '/apis/storage.k8s.io/v1/storageclasses';
const claims = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const merge = { contentType: 'application/merge-patch+json' };
const claimSpec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
const defaultAnnotation = { 'storageclass.kubernetes.io/is-default-class': 'true' };

async function createClaim(server: ContractServer, name: string, storageClassName?: string): Promise<string | undefined> {
  const created = await kubeJson(server, 'POST', claims, {
    body: { metadata: { name }, spec: { ...claimSpec, ...(storageClassName === undefined ? {} : { storageClassName }) } },
  });
  assert.equal(created.status, 201, created.text);
  // Binding is the volume controller's write, through /status (nothing else binds here).
  const bound = await kubeJson(server, 'PATCH', `${claims}/${name}/status`, { body: { status: { phase: 'Bound' } }, ...merge });
  assert.equal(bound.status, 200, bound.text);
  return (created.body.spec as { storageClassName?: string }).storageClassName;
}

const grow = (server: ContractServer, name: string, storage: string) =>
  kubeJson(server, 'PATCH', `${claims}/${name}`, { body: { spec: { resources: { requests: { storage } } } }, ...merge });

export const storageCases: CaseModule = (ctx) => {
  it('StorageClasses: provisioner required, reclaimPolicy/volumeBindingMode defaulted, only allowVolumeExpansion may change', async () => {
    const { server } = ctx();
    const missing = await kubeJson(server, 'POST', classes, { body: { metadata: { name: 'keelson-contract-bad' } } });
    assert.equal(missing.status, 422, missing.text);
    assert.equal(missing.body.message, 'StorageClass.storage.k8s.io "keelson-contract-bad" is invalid: provisioner: Required value');
    const created = await kubeJson(server, 'POST', classes, { body: { metadata: { name: 'keelson-contract-sc' }, provisioner: 'example.com/disk' } });
    assert.equal(created.status, 201, created.text);
    try {
      assert.deepEqual([created.body.reclaimPolicy, created.body.volumeBindingMode], ['Delete', 'Immediate']);
      const change = await kubeJson(server, 'PATCH', `${classes}/keelson-contract-sc`, {
        body: { provisioner: 'example.com/other', reclaimPolicy: 'Retain', parameters: { a: 'b' }, volumeBindingMode: 'WaitForFirstConsumer' },
        ...merge,
      });
      assert.equal(change.status, 422, change.text);
      assert.deepEqual((change.body.details as { causes: Array<{ field: string; message: string }> }).causes, [
        { reason: 'FieldValueForbidden', field: 'parameters', message: 'Forbidden: updates to parameters are forbidden.' },
        { reason: 'FieldValueForbidden', field: 'provisioner', message: 'Forbidden: updates to provisioner are forbidden.' },
        { reason: 'FieldValueForbidden', field: 'reclaimPolicy', message: 'Forbidden: updates to reclaimPolicy are forbidden.' },
        { reason: 'FieldValueInvalid', field: 'volumeBindingMode', message: 'Invalid value: "WaitForFirstConsumer": field is immutable' },
      ]);
      const expand = await kubeJson(server, 'PATCH', `${classes}/keelson-contract-sc`, { body: { allowVolumeExpansion: true }, ...merge });
      assert.equal(expand.status, 200, expand.text);
    } finally {
      await kubeJson(server, 'DELETE', `${classes}/keelson-contract-sc`);
    }
  });

  it('claims: a new one without a class gets the default; a Bound one grows only with an expandable class (else 403)', async () => {
    const { server } = ctx();
    const made = await Promise.all([
      kubeJson(server, 'POST', classes, {
        body: { metadata: { name: 'keelson-contract-grow', annotations: defaultAnnotation }, provisioner: 'example.com/disk', allowVolumeExpansion: true },
      }),
      kubeJson(server, 'POST', classes, { body: { metadata: { name: 'keelson-contract-fixed' }, provisioner: 'example.com/disk' } }),
    ]);
    for (const answer of made) assert.equal(answer.status, 201, answer.text);
    try {
      assert.equal(await createClaim(server, 'sc-default'), 'keelson-contract-grow', 'the default class is filled in');
      assert.equal(await createClaim(server, 'sc-fixed', 'keelson-contract-fixed'), 'keelson-contract-fixed');
      assert.equal(await createClaim(server, 'sc-none', ''), '', 'an explicit "" means no class');
      const grown = await grow(server, 'sc-default', '2Gi');
      assert.equal(grown.status, 200, grown.text);
      assert.equal((grown.body.spec as typeof claimSpec).resources.requests.storage, '2Gi');
      for (const name of ['sc-fixed', 'sc-none']) {
        const refused = await grow(server, name, '2Gi');
        assert.equal(refused.status, 403, refused.text);
        assert.equal(
          refused.body.message,
          `persistentvolumeclaims "${name}" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`,
        );
        assert.deepEqual([refused.body.reason, refused.body.details], ['Forbidden', { name, kind: 'persistentvolumeclaims' }]);
      }
      const shrink = await grow(server, 'sc-default', '1Gi');
      assert.equal(shrink.status, 422, shrink.text);
      assert.match(String(shrink.body.message), /spec\.resources\.requests\.storage: Forbidden: field can not be less than previous value/);
      // The phase that counts is the stored one: a PUT claiming Bound for a Pending claim is still refused.
      const pending = await kubeJson(server, 'PATCH', `${claims}/sc-default/status`, { body: { status: { phase: 'Pending' } }, ...merge });
      assert.equal(pending.status, 200, pending.text);
      const put = await kubeJson(server, 'PUT', `${claims}/sc-default`, {
        body: { ...pending.body, spec: { ...(pending.body.spec as object), resources: { requests: { storage: '3Gi' } } }, status: { phase: 'Bound' } },
      });
      assert.equal(put.status, 422, put.text);
    } finally {
      await Promise.all(['keelson-contract-grow', 'keelson-contract-fixed'].map((name) => kubeJson(server, 'DELETE', `${classes}/${name}`)));
    }
  });
};
