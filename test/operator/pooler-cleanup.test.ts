import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { group, plural, version } from '../../api/crd/types.js';
import { Labels, names } from '../../api/naming.js';
import { unwantedPoolerObjects } from '../../operator/reconcile/pooler-cleanup.js';
import { startOperatorOnStandIn, type OperatorOnStandIn } from './stand-in-operator.js';
import { eventually } from './support.js';

/**
 * Turning the pooler off removes what the operator made for it, and only that: the operator on the
 * API server stand-in, a cluster with both poolers, then the read-only pooler off, then the whole
 * pooler off. Objects that only look alike (another owner, no pooler label) stay.
 */
const ns = 'pool';
const cluster = 'shop';
const n = names(cluster);
const kinds = [
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
];
const readWrite = [
  `Deployment/${n.poolerDeployment}`,
  `Service/${n.poolerRwService}`,
  `Service/${n.poolerControlService}`,
  `ConfigMap/${n.poolerConfigMap}`,
  `Secret/${n.poolerSecret}`,
  `PodDisruptionBudget/${n.poolerPodDisruptionBudget}`,
];
const readOnly = [
  `Deployment/${n.poolerReadOnlyDeployment}`,
  `Service/${n.poolerReadOnlyService}`,
  `Service/${n.poolerReadOnlyControlService}`,
  `PodDisruptionBudget/${n.poolerReadOnlyPodDisruptionBudget}`,
];

describe('pooler objects removed when no longer wanted (stand-in)', { timeout: 120_000 }, () => {
  let env: OperatorOnStandIn;
  /** kind/name of every object in the namespace whose name starts with the pooler's. */
  const present = async (): Promise<string[]> => {
    const found: string[] = [];
    for (const k of kinds) {
      const list = await env.api.objects.list(k.apiVersion, k.kind, ns);
      for (const o of list.items)
        if (o.metadata?.name?.startsWith(`${cluster}-pooler`) || o.metadata?.name?.startsWith('lookalike')) found.push(`${k.kind}/${o.metadata!.name}`);
    }
    return found.sort();
  };

  before(async () => {
    env = await startOperatorOnStandIn(ns, 'pooler-cleanup');
  });
  after(async () => env?.close());

  it("creates both poolers' objects, removes the read-only ones when it is turned off, then the rest but the role's Secret (no right to delete Secrets)", async () => {
    const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const patch = (spec: Record<string, unknown>) =>
      env.api.custom.patchNamespacedCustomObject({ group, version, namespace: ns, plural, name: cluster, body: { spec } }, merge);
    await env.api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'DatabaseCluster',
        metadata: { name: cluster },
        spec: { instances: 1, pooler: { enabled: true, instances: 2, readOnly: { enabled: true } } },
      },
    });
    await eventually(
      "both poolers' objects",
      async () => {
        const now = await present();
        return [...readWrite, ...readOnly].every((o) => now.includes(o));
      },
      30_000,
    );

    // Look-alikes: the pooler label on an object of another owner, and an object of the cluster without the pooler label.
    const uid = (await env.api.readCluster(ns, cluster))!.metadata!.uid!;
    // (The garbage collector removes an object whose owner does not exist, so the other owner is real.)
    const owner = await env.api.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'lookalike-owner' } } });
    await env.api.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'lookalike-foreign',
          labels: { [Labels.cluster]: cluster, [Labels.pooler]: 'rw' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'lookalike-owner', uid: owner.metadata!.uid!, controller: true }],
        },
      },
    });
    await env.api.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'lookalike-unlabelled',
          labels: { [Labels.cluster]: cluster },
          ownerReferences: [{ apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', name: cluster, uid, controller: true }],
        },
      },
    });

    await patch({ pooler: { readOnly: { enabled: false } } });
    await eventually(
      "the read-only pooler's objects gone, the others kept",
      async () => {
        const now = await present();
        return readOnly.every((o) => !now.includes(o)) && readWrite.every((o) => now.includes(o)) ? now : undefined;
      },
      30_000,
    );

    await patch({ pooler: { enabled: false } });
    const left = await eventually(
      "the pooler's objects gone but its Secret",
      async () => {
        const now = await present();
        return readWrite.filter((o) => !o.startsWith('Secret/')).every((o) => !now.includes(o)) ? now : undefined;
      },
      30_000,
    );
    assert.deepEqual(
      left,
      ['ConfigMap/lookalike-foreign', 'ConfigMap/lookalike-owner', 'ConfigMap/lookalike-unlabelled', `Secret/${n.poolerSecret}`],
      "objects that only look like the pooler's stay, and so does the role's Secret",
    );
    const events = (await env.api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === 'PoolerRemoved');
    assert.ok(
      events.some((e) => e.message?.includes(`Deployment/${n.poolerDeployment}`)),
      'an Event names what was removed',
    );
  });

  it('picks only objects with the cluster and pooler labels, controlled by this cluster, not desired, not being deleted', () => {
    const object = (kind: string, name: string, labels: Record<string, string>, ownerUid = 'u1', extra: Record<string, unknown> = {}): KubernetesObject =>
      ({
        kind,
        metadata: {
          name,
          labels,
          ownerReferences: [{ apiVersion: 'keelson.io/v1', kind: 'DatabaseCluster', name: cluster, uid: ownerUid, controller: true }],
          ...extra,
        },
      }) as KubernetesObject;
    const ours = { [Labels.cluster]: cluster, [Labels.pooler]: 'rw' };
    const observed = [
      object('Deployment', 'shop-pooler', ours),
      object('Service', 'shop-pooler-rw', ours),
      object('ConfigMap', 'other-cluster', { [Labels.cluster]: 'other', [Labels.pooler]: 'rw' }),
      object('ConfigMap', 'no-pooler-label', { [Labels.cluster]: cluster }),
      object('ConfigMap', 'foreign-owner', ours, 'u2'),
      object('ConfigMap', 'going', ours, 'u1', { deletionTimestamp: new Date() }),
      object('Secret', 'shop-pooler', ours),
    ];
    const desired = [object('Service', 'shop-pooler-rw', ours)];
    const picked = unwantedPoolerObjects(observed, desired, { name: cluster, uid: 'u1' }).map((o) => `${o.kind}/${o.metadata?.name}`);
    assert.deepEqual(picked, ['Deployment/shop-pooler'], 'never a Secret: the operator has no right to delete one');
    assert.deepEqual(unwantedPoolerObjects(observed, [], { name: cluster, uid: undefined }), [], 'no uid, nothing removed');
  });
});
