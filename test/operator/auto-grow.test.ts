import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { nextSize, planAutoGrow } from '../../operator/reconcile/auto-grow.js';
import { memberVolumes, usageSummary } from '../../operator/reconcile/volume-usage.js';
import type { HaClusterMember } from '../../operator/hanode-client.js';

const mi = 1024 * 1024;
const policy = { threshold: 80, step: '20%', max: '100Mi' };

function claim(name: string, request: string, capacity = request, conditions: V1PersistentVolumeClaim['status'] = {}): V1PersistentVolumeClaim {
  return {
    metadata: { name },
    spec: { resources: { requests: { storage: request } } },
    status: { phase: 'Bound', capacity: { storage: capacity }, ...conditions },
  };
}
function member(name: string, usedMi: number, capacityMi = 64): HaClusterMember {
  return {
    name,
    role: 'replica',
    volumes: [{ volume: 'data', capacity_bytes: capacityMi * mi, used_bytes: usedMi * mi, free_bytes: (capacityMi - usedMi) * mi }],
  };
}

describe('auto-grow planning', () => {
  it('grows a claim past the threshold by the step, in whole MiB, never above max', () => {
    assert.equal(nextSize(64 * mi, policy), 77 * mi, '64Mi + 20% = 76.8Mi, rounded up');
    assert.equal(nextSize(90 * mi, policy), 100 * mi, 'capped at max');
    assert.equal(nextSize(64 * mi, { step: '16Mi', max: '1Gi' }), 80 * mi);
    const steps = planAutoGrow(policy, [claim('pgdata-demo-0', '64Mi'), claim('pgdata-demo-1', '64Mi')], [member('demo-0', 52), member('demo-1', 50)]);
    assert.deepEqual(
      steps.map((s) => [s.kind, s.claim.metadata?.name, s.kind === 'grow' ? s.to : '']),
      [['grow', 'pgdata-demo-0', '77Mi']],
    );
  });

  it('waits while a growth is under way or the usage was measured before it', () => {
    const resizing = claim('pgdata-demo-0', '77Mi', '64Mi');
    assert.deepEqual(planAutoGrow(policy, [resizing], [member('demo-0', 60)]), [], 'capacity not yet the request');
    const pending = claim('pgdata-demo-0', '64Mi', '64Mi', { conditions: [{ type: 'FileSystemResizePending', status: 'True' }] });
    assert.deepEqual(planAutoGrow(policy, [pending], [member('demo-0', 60)]), []);
    const grown = claim('pgdata-demo-0', '77Mi');
    assert.deepEqual(planAutoGrow(policy, [grown], [member('demo-0', 60, 64)]), [], 'the report still shows the 64Mi volume');
    assert.equal(planAutoGrow(policy, [grown], [member('demo-0', 65, 77)])[0]?.kind, 'grow');
  });

  it('reports a claim at max instead of growing it, and does nothing without auto-grow or reports', () => {
    assert.deepEqual(
      planAutoGrow(policy, [claim('pgdata-demo-0', '100Mi')], [member('demo-0', 95, 100)]).map((s) => s.kind),
      ['atMax'],
    );
    assert.deepEqual(planAutoGrow(undefined, [claim('pgdata-demo-0', '64Mi')], [member('demo-0', 63)]), []);
    assert.deepEqual(planAutoGrow(policy, [claim('pgdata-demo-0', '64Mi')], undefined), []);
    assert.deepEqual(planAutoGrow(policy, [{ ...claim('pgdata-demo-0', '64Mi'), status: { phase: 'Pending' } }], [member('demo-0', 63)]), []);
  });

  it("grows the WAL claims by the WAL volume's reports under walStorage.autoGrow", () => {
    const walMember: HaClusterMember = {
      name: 'demo-0',
      role: 'primary',
      volumes: [
        { volume: 'data', capacity_bytes: 64 * mi, used_bytes: 10 * mi, free_bytes: 54 * mi },
        { volume: 'wal', capacity_bytes: 64 * mi, used_bytes: 60 * mi, free_bytes: 4 * mi },
      ],
    };
    const claims = [claim('pgdata-demo-0', '64Mi'), claim('pgwal-demo-0', '64Mi')];
    assert.deepEqual(planAutoGrow(policy, claims, [walMember]), [], 'the data volume is below the threshold');
    const steps = planAutoGrow(policy, claims, [walMember], { volume: 'wal', claimPrefix: 'pgwal' });
    assert.deepEqual(
      steps.map((s) => [s.claim.metadata?.name, s.kind === 'grow' ? s.to : '']),
      [['pgwal-demo-0', '77Mi']],
    );
  });

  it('maps the published usage to status.members[].volumes', () => {
    assert.deepEqual(memberVolumes({ ...member('demo-0', 16), volumes: [{ volume: 'data', capacity_bytes: 10, used_bytes: 9, free_bytes: 1, full: true }] }), [
      { volume: 'data', capacityBytes: 10, usedBytes: 9, freeBytes: 1, full: true },
    ]);
    assert.equal(memberVolumes({ name: 'demo-0', role: 'replica' }), undefined);
    const volume = (v: 'data' | 'wal', used: number) => ({ volume: v, capacityBytes: 100, usedBytes: used, freeBytes: 100 - used });
    assert.equal(
      usageSummary([
        { name: 'demo-0', role: 'primary', ready: true, volumes: [volume('data', 61), volume('wal', 93)] },
        { name: 'demo-1', role: 'replica', ready: true, volumes: [volume('data', 58)] },
      ]),
      'demo-0 61% (wal 93%), demo-1 58%',
    );
    assert.equal(usageSummary([{ name: 'demo-0', role: 'primary', ready: true }]), undefined);
  });
});
