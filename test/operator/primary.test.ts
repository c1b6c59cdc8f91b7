import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease } from '@kubernetes/client-node';
import { leaseHolder, primaryOf } from '../../operator/reconcile/primary.js';
import { computeStatus } from '../../operator/reconcile/status.js';
import { sampleCluster } from './fixtures.js';
import { pod } from './pods.js';

const now = new Date('2026-11-22T20:00:00Z');
const lease = (holder: string, renewedSecondsAgo: number): V1Lease => ({
  metadata: { name: 'demo-leader' },
  spec: { holderIdentity: holder, leaseDurationSeconds: 10, renewTime: new Date(now.getTime() - renewedSecondsAgo * 1000) },
});

describe('the primary the operator reports', () => {
  it('is the holder of an unexpired leader Lease; an expired or empty Lease names nobody', () => {
    assert.equal(leaseHolder(lease('demo-2', 3), now), 'demo-2');
    assert.equal(leaseHolder(lease('demo-2', 11), now), undefined);
    assert.equal(leaseHolder(lease('', 1), now), undefined);
    assert.equal(leaseHolder(undefined, now), undefined);
  });

  it('follows the Lease when labels name two pods or another pod, and the one label otherwise', () => {
    const twoLabelled = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'primary' })];
    assert.equal(primaryOf(twoLabelled, 'demo-2'), 'demo-2');
    assert.equal(primaryOf(twoLabelled, undefined), undefined);
    const staleOnly = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'replica' })];
    assert.equal(primaryOf(staleOnly, 'demo-1'), 'demo-1');
    assert.equal(primaryOf(staleOnly, undefined), 'demo-0');
    assert.equal(primaryOf(staleOnly, 'demo-7'), 'demo-0', 'a holder that is no pod of the cluster does not count');
  });

  it('keeps a cluster whose former primary still carries the label Healthy, naming the Lease holder', () => {
    const cluster = sampleCluster();
    cluster.status = { phase: 'Healthy' };
    const pods = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'primary' })];
    const status = computeStatus({
      cluster,
      now,
      statefulSetReplicas: 3,
      outdatedPods: 0,
      pods,
      primary: primaryOf(pods, leaseHolder(lease('demo-2', 1), now)),
    });
    assert.equal(status.currentPrimary, 'demo-2');
    assert.deepEqual(
      status.members?.map((m) => m.role),
      ['replica', 'replica', 'primary'],
    );
    assert.notEqual(status.conditions?.find((c) => c.type === 'Ready')?.reason, 'NoPrimary');
    // Without the Lease the same labels are two primaries: NoPrimary, as before.
    const labelsOnly = computeStatus({ cluster, now, statefulSetReplicas: 3, outdatedPods: 0, pods });
    assert.equal(labelsOnly.conditions?.find((c) => c.type === 'Ready')?.reason, 'NoPrimary');
  });
});
