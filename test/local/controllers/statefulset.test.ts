import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { claimsFor, planStatefulSet, podFor, revisionLabel, statefulSetStatus, updateRevision } from '../../../local/controllers/statefulset.js';

function set(overrides: Partial<V1StatefulSet['spec']> = {}): V1StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns', uid: 'set-uid', generation: 3 },
    spec: {
      replicas: 3,
      serviceName: 'db-headless',
      selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: { app: 'db' } },
        spec: { containers: [{ name: 'pg', image: 'ghcr.io/keelson/keelson:1' }], volumes: [{ name: 'data', emptyDir: {} }] },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      ...overrides,
    },
  };
}

function pod(s: V1StatefulSet, ordinal: number, state: { ready?: boolean; terminating?: boolean; revision?: string; phase?: string } = {}): V1Pod {
  const p = podFor(s, ordinal);
  if (state.revision) p.metadata!.labels![revisionLabel] = state.revision;
  if (state.terminating) p.metadata!.deletionTimestamp = new Date();
  p.metadata!.uid = `uid-${ordinal}`;
  p.status = { phase: state.phase ?? 'Running', conditions: [{ type: 'Ready', status: state.ready === false ? 'False' : 'True' }] };
  return p;
}

test('pods get stable identity, hostname, subdomain, owner and claim volumes replacing template volumes', () => {
  const s = set();
  const p = podFor(s, 2);
  assert.equal(p.metadata?.name, 'db-2');
  assert.equal(p.spec?.hostname, 'db-2');
  assert.equal(p.spec?.subdomain, 'db-headless');
  assert.equal(p.metadata?.labels?.['statefulset.kubernetes.io/pod-name'], 'db-2');
  assert.equal(p.metadata?.labels?.[revisionLabel], updateRevision(s));
  assert.deepEqual(p.metadata?.ownerReferences?.[0], {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    name: 'db',
    uid: 'set-uid',
    controller: true,
    blockOwnerDeletion: true,
  });
  assert.deepEqual(p.spec?.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-2' } }]);
  const [claim] = claimsFor(s, 2);
  assert.equal(claim.metadata?.name, 'data-db-2');
  assert.equal(claim.metadata?.labels?.app, 'db');
  assert.equal(claim.metadata?.ownerReferences, undefined);
  const deleting = claimsFor(set({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } }), 0)[0];
  assert.equal(deleting.metadata?.ownerReferences?.[0].uid, 'set-uid');
});

test('revision hash changes with the template only', () => {
  const a = set();
  const b = set({ replicas: 5 });
  const c = set({ template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'ghcr.io/keelson/keelson:2' }] } } });
  assert.equal(updateRevision(a), updateRevision(b));
  assert.notEqual(updateRevision(a), updateRevision(c));
});

test('OrderedReady creates one pod at a time and waits for readiness', () => {
  const s = set();
  assert.deepEqual(planStatefulSet(s, []), [{ type: 'create', ordinal: 0 }]);
  assert.deepEqual(planStatefulSet(s, [pod(s, 0, { ready: false })]), []);
  assert.deepEqual(planStatefulSet(s, [pod(s, 0)]), [{ type: 'create', ordinal: 1 }]);
  assert.deepEqual(planStatefulSet(s, [pod(s, 0), pod(s, 1)]), [{ type: 'create', ordinal: 2 }]);
  assert.deepEqual(planStatefulSet(s, [pod(s, 0), pod(s, 1), pod(s, 2)]), []);
  // A missing lower ordinal is recreated before anything else.
  assert.deepEqual(planStatefulSet(s, [pod(s, 1), pod(s, 2)]), [{ type: 'create', ordinal: 0 }]);
});

test('Parallel creates all missing pods at once', () => {
  const s = set({ podManagementPolicy: 'Parallel' });
  assert.deepEqual(planStatefulSet(s, [pod(s, 1, { ready: false })]), [
    { type: 'create', ordinal: 0 },
    { type: 'create', ordinal: 2 },
  ]);
});

test('scale down removes the highest ordinal first, one at a time', () => {
  const s = set({ replicas: 1 });
  const pods = [pod(s, 0), pod(s, 1), pod(s, 2)];
  const actions = planStatefulSet(s, pods);
  assert.equal(actions.length, 1);
  assert.equal(actions[0].type === 'delete' && actions[0].pod.metadata?.name, 'db-2');
  assert.deepEqual(planStatefulSet(s, [pod(s, 0), pod(s, 1), pod(s, 2, { terminating: true })]), []);
});

test('RollingUpdate replaces stale pods from the highest ordinal, honouring the partition; OnDelete never does', () => {
  const s = set();
  const stale = [pod(s, 0, { revision: 'db-old' }), pod(s, 1, { revision: 'db-old' }), pod(s, 2, { revision: 'db-old' })];
  const first = planStatefulSet(s, stale);
  assert.equal(first.length, 1);
  assert.equal(first[0].type === 'delete' && first[0].pod.metadata?.name, 'db-2');
  const partly = [pod(s, 0, { revision: 'db-old' }), pod(s, 1, { revision: 'db-old' }), pod(s, 2)];
  const second = planStatefulSet(s, partly);
  assert.equal(second[0].type === 'delete' && second[0].pod.metadata?.name, 'db-1');
  // Not while a pod is unready.
  assert.deepEqual(planStatefulSet(s, [pod(s, 0, { revision: 'db-old' }), pod(s, 1, { revision: 'db-old', ready: false }), pod(s, 2)]), []);
  const partitioned = set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
  assert.deepEqual(planStatefulSet(partitioned, [pod(partitioned, 0, { revision: 'x' }), pod(partitioned, 1, { revision: 'x' }), pod(partitioned, 2)]), []);
  const onDelete = set({ updateStrategy: { type: 'OnDelete' } });
  assert.deepEqual(planStatefulSet(onDelete, stale), []);
});

test('failed pods are deleted for recreation; status counts ready and updated pods', () => {
  const s = set();
  const actions = planStatefulSet(s, [pod(s, 0, { phase: 'Failed', ready: false })]);
  assert.equal(actions[0].type, 'delete');
  const status = statefulSetStatus(s, [pod(s, 0), pod(s, 1, { ready: false }), pod(s, 2, { revision: 'db-old' })]);
  assert.equal(status.replicas, 3);
  assert.equal(status.readyReplicas, 2);
  assert.equal(status.updatedReplicas, 2);
  assert.equal(status.observedGeneration, 3);
  assert.equal(status.updateRevision, updateRevision(s));
  assert.equal(status.availableReplicas, 2);
  // minReadySeconds: a pod that just became ready is not available yet.
  const slow = set({ minReadySeconds: 60 });
  const fresh = pod(slow, 0);
  fresh.status!.conditions![0].lastTransitionTime = new Date();
  const seasoned = pod(slow, 1);
  seasoned.status!.conditions![0].lastTransitionTime = new Date(Date.now() - 120_000);
  assert.equal(statefulSetStatus(slow, [fresh, seasoned]).availableReplicas, 1);
});
