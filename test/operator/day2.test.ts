import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configPatch, desiredDynamicConfig } from '../../operator/builders/dynamic-config.js';
import { planDeclarativeSwitchover, planRollout, planScale } from '../../operator/reconcile/day2.js';
import { quantityBytes } from '../../api/crd/quantity.js';
import { claimsToGrow, keepImmutableFields } from '../../operator/reconcile/storage.js';
import { buildStatefulSet } from '../../operator/builders/statefulset.js';
import { sampleCluster, sampleContext } from './fixtures.js';
import { pod } from './pods.js';

const three = [pod('demo-0', { role: 'replica' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'primary' })];

describe('day-2 planning', () => {
  it('scale-down never removes the primary: it switches over first', () => {
    const cluster = sampleCluster({ instances: 2 });
    assert.deepEqual(planScale(cluster, three, 'demo-2', 3), {
      replicas: 3,
      step: { type: 'switchover', leader: 'demo-2', candidate: 'demo-0', reason: 'scale-down to 2 would remove primary demo-2' },
    });
    assert.deepEqual(planScale(cluster, three, 'demo-0', 3), { replicas: 2, step: { type: 'none' } });
    assert.deepEqual(planScale(sampleCluster({ instances: 5 }), three, 'demo-2', 3), { replicas: 5, step: { type: 'none' } });
    const unready = [pod('demo-0', { role: 'replica', ready: false }), pod('demo-1', { role: 'primary' })];
    assert.equal(planScale(sampleCluster({ instances: 1 }), unready, 'demo-1', 2).step.type, 'wait');
  });

  it('rolls replicas first, then switches over, then replaces the old primary', () => {
    const cluster = sampleCluster();
    const old = (name: string, role: 'primary' | 'replica') => pod(name, { role, revision: 'r1' });
    const fresh = (name: string, role: 'primary' | 'replica') => pod(name, { role, revision: 'r2' });
    assert.deepEqual(planRollout(cluster, [old('demo-0', 'primary'), old('demo-1', 'replica'), old('demo-2', 'replica')], 'r2', 'demo-0'), {
      type: 'deletePod',
      pod: 'demo-2',
      reason: 'rolling update: replica first',
    });
    assert.equal(
      planRollout(cluster, [old('demo-0', 'primary'), old('demo-1', 'replica'), pod('demo-2', { ready: false, revision: 'r2' })], 'r2', 'demo-0').type,
      'wait',
    );
    assert.equal(
      planRollout(cluster, [old('demo-0', 'primary'), old('demo-1', 'replica')], 'r2', 'demo-0', 3).type,
      'wait',
      'a replaced pod that is not back yet',
    );
    assert.deepEqual(planRollout(cluster, [old('demo-0', 'primary'), fresh('demo-1', 'replica'), fresh('demo-2', 'replica')], 'r2', 'demo-0'), {
      type: 'switchover',
      leader: 'demo-0',
      candidate: 'demo-1',
      reason: 'rolling update: move the primary to an updated replica',
    });
    assert.deepEqual(planRollout(cluster, [old('demo-0', 'replica'), fresh('demo-1', 'primary'), fresh('demo-2', 'replica')], 'r2', 'demo-1'), {
      type: 'deletePod',
      pod: 'demo-0',
      reason: 'rolling update: replica first',
    });
    assert.deepEqual(planRollout(cluster, [fresh('demo-0', 'replica'), fresh('demo-1', 'primary')], 'r2', 'demo-1'), { type: 'none' });
  });

  it('replaces no pod while it does not know the primary: the highest ordinal may be it', () => {
    const cluster = sampleCluster({ instances: 2 });
    const pods = [pod('demo-0', { role: 'replica', revision: 'r1' }), pod('demo-1', { role: 'primary', revision: 'r1' })];
    assert.deepEqual(planRollout(cluster, pods, 'r2', undefined), { type: 'wait', reason: 'rolling update: no primary known' });
    assert.deepEqual(planRollout(cluster, pods, 'r2', 'demo-1'), { type: 'deletePod', pod: 'demo-0', reason: 'rolling update: replica first' });
  });

  it('declarative switchover reports Pending, then Succeeded, and fails for unknown instances', () => {
    const now = new Date('2026-11-22T20:00:00Z');
    const cluster = sampleCluster({ switchover: { targetInstance: 'demo-1' } });
    const first = planDeclarativeSwitchover(cluster, three, 'demo-2', undefined, now);
    assert.deepEqual(first.step, { type: 'switchover', leader: 'demo-2', candidate: 'demo-1', reason: 'spec.switchover.targetInstance' });
    assert.equal(first.state?.result, 'Pending');
    const done = planDeclarativeSwitchover(cluster, three, 'demo-1', first.state, now);
    assert.equal(done.state?.result, 'Succeeded');
    assert.equal(done.step.type, 'none');
    const missing = planDeclarativeSwitchover(sampleCluster({ switchover: { targetInstance: 'demo-7' } }), three, 'demo-2', undefined, now);
    assert.equal(missing.state?.result, 'Failed');
    const late = planDeclarativeSwitchover(cluster, three, 'demo-2', first.state, new Date(now.getTime() + 121_000));
    assert.equal(late.state?.result, 'Failed');
    assert.equal(planDeclarativeSwitchover(sampleCluster(), three, 'demo-2', undefined, now).step.type, 'none');
  });

  it('builds the /config document and removes parameters no longer wanted', () => {
    const cluster = sampleCluster({ postgresql: { parameters: { work_mem: '8MB' } } });
    const desired = desiredDynamicConfig(cluster);
    assert.equal(desired.loop_wait, 10);
    assert.equal(desired.synchronous_mode, 'off');
    assert.equal(desired.primary_hang_timeout, 30);
    const patch = configPatch(desired, { db: { parameters: { work_mem: '4MB', max_connections: '300' } } });
    assert.deepEqual((patch.db as { parameters: unknown }).parameters, { max_slot_wal_keep_size: '256MB', work_mem: '8MB', max_connections: null });
    const strict = desiredDynamicConfig(sampleCluster({ ha: { synchronousMode: 'strict' } }));
    assert.deepEqual([strict.synchronous_mode, strict.synchronous_mode_strict], ['on', true]);
  });

  it('bounds replication slot retention to a quarter of the data volume unless the spec sets it', () => {
    const parameters = (spec: Parameters<typeof sampleCluster>[0]) =>
      (desiredDynamicConfig(sampleCluster(spec)).db as { parameters: Record<string, string> }).parameters;
    assert.equal(parameters({ storage: { size: '64Mi' } }).max_slot_wal_keep_size, '16MB');
    assert.equal(parameters({ storage: { size: '10Gi' } }).max_slot_wal_keep_size, '2560MB');
    assert.equal(
      parameters({ postgresql: { parameters: { max_slot_wal_keep_size: '-1' } } }).max_slot_wal_keep_size,
      '-1',
      'the spec decides when it names the parameter',
    );
  });

  it('bounds max_wal_size, min_wal_size and wal_keep_size to a small WAL volume unless the spec sets them', () => {
    const parameters = (spec: Parameters<typeof sampleCluster>[0]) =>
      (desiredDynamicConfig(sampleCluster(spec)).db as { parameters: Record<string, string> }).parameters;
    const sizes = (spec: Parameters<typeof sampleCluster>[0]) =>
      ['max_wal_size', 'min_wal_size', 'wal_keep_size'].map((name) => parameters(spec)[name] ?? null);
    assert.deepEqual(sizes({ walStorage: { size: '96Mi' } }), ['48MB', '32MB', '24MB'], 'the segments a first backup leaves fit');
    assert.deepEqual(sizes({ walStorage: { size: '1Gi' } }), ['512MB', '80MB', '128MB']);
    assert.deepEqual(sizes({ walStorage: { size: '10Gi' } }), ['1024MB', '80MB', '128MB'], "never above PostgreSQL's and ha-node's defaults");
    assert.deepEqual(sizes({ walStorage: { size: '64Mi' } }), ['32MB', '32MB', '16MB'], 'two segments at least');
    assert.deepEqual(sizes({ storage: { size: '1Gi' } }), [null, null, null], 'WAL on a data volume of 512Mi or more: the defaults');
    assert.deepEqual(sizes({ storage: { size: '256Mi' } }), [null, null, '64MB'], 'on a small data volume only what is kept for replicas');
    const named = parameters({ walStorage: { size: '96Mi' }, postgresql: { parameters: { MAX_WAL_SIZE: '64MB' } } });
    assert.equal(named.max_wal_size, undefined, 'a parameter the spec names (in any case) is the spec’s');
    assert.equal(named.MAX_WAL_SIZE, '64MB');
    assert.equal(named.min_wal_size, '32MB');
  });
});

describe('storage changes', () => {
  it('parses storage quantities and picks only claims that must grow', () => {
    assert.equal(quantityBytes('1Gi'), 2 ** 30);
    assert.equal(quantityBytes('500M'), 5e8);
    assert.equal(quantityBytes('lots'), undefined);
    const claim = (name: string, storage: string) => ({ metadata: { name }, spec: { resources: { requests: { storage } } } });
    assert.deepEqual(
      claimsToGrow([claim('a', '1Gi'), claim('b', '10Gi'), claim('c', '1000Mi')], '2Gi').map((c) => c.metadata?.name),
      ['a', 'c'],
    );
  });

  it('keeps the StatefulSet fields the API server will not change', () => {
    const stored = buildStatefulSet(sampleContext({ storage: { size: '1Gi' } }));
    const wanted = buildStatefulSet(sampleContext({ storage: { size: '9Gi' }, instances: 4 }));
    const merged = keepImmutableFields(wanted, stored);
    assert.equal(merged.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(merged.spec?.replicas, 4);
    assert.equal(keepImmutableFields(wanted, undefined), wanted);
  });
});
