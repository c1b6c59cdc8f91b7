import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationMs } from '../../operator/api/replica-types.js';
import { InvalidSpecError } from '../../operator/api/validate.js';
import { haNodeConfig } from '../../operator/builders/configmap.js';
import { configPatch, desiredDynamicConfig } from '../../operator/builders/dynamic-config.js';
import { validateDynamicConfig } from '../../sidecar/ha-node/ops/config-validate.js';
import { describeReplicaSource, followedCluster } from '../../operator/reconcile/replica-source.js';
import { replicaStatusOf } from '../../operator/reconcile/replica-status.js';
import { sampleCluster } from './fixtures.js';

/** spec.replica without processes: the spec rules, the path to ha-node's standby_cluster, status. */

const now = new Date('2026-11-25T03:00:00.000Z');
const target = { host: '127.1.0.9', port: 5432 };

function refusal(spec: Record<string, unknown>, name = 'demo'): string {
  try {
    sampleCluster(spec, name);
  } catch (error) {
    assert.ok(error instanceof InvalidSpecError);
    return error.message;
  }
  return 'accepted';
}

describe('spec.replica rules', () => {
  it('takes a DatabaseCluster or a host with credentials, and defaults enabled to true', () => {
    assert.deepEqual(sampleCluster({ replica: { source: { cluster: 'src' } } }).spec.replica, { enabled: true, source: { cluster: 'src' } });
    assert.equal(sampleCluster({ replica: { source: { host: '127.0.0.9', port: 6432, credentialsSecret: 'src-repl' }, minApplyDelay: '5m' } }).spec.replica?.minApplyDelay, '5m');
  });

  it('refuses each malformed source with the rule it breaks', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /exactly one of cluster or host/],
      [{ cluster: 'src', host: '127.0.0.9', credentialsSecret: 's' }, /exactly one of cluster or host/],
      [{ host: '127.0.0.9' }, /host needs credentialsSecret/],
      [{ host: '127.0.0.9', credentialsSecret: 's', namespace: 'x' }, /namespace goes with cluster/],
      [{ cluster: 'src', port: 6432 }, /port goes with host/],
      [{ host: 'bad host', credentialsSecret: 's' }, /spec\.replica\.source\.host: must be a host name/],
      [{ cluster: 'Src' }, /spec\.replica\.source\.cluster/],
    ];
    for (const [source, message] of cases) assert.match(refusal({ replica: { source } }), message, JSON.stringify(source));
    assert.match(refusal({ replica: { source: { cluster: 'src' }, minApplyDelay: 'soon' } }), /spec\.replica\.minApplyDelay/);
    assert.match(refusal({ replica: { source: { cluster: 'demo' } } }), /cannot be a standby of itself/);
    assert.match(refusal({ replica: { source: { cluster: 'demo', namespace: 'db' } } }), /cannot be a standby of itself/);
    assert.equal(refusal({ replica: { source: { cluster: 'demo', namespace: 'other' } } }), 'accepted', 'the same name in another namespace is another cluster');
  });
});

describe('spec.replica reaches ha-node as standby_cluster', () => {
  const cluster = sampleCluster({ replica: { source: { cluster: 'src' }, minApplyDelay: '1m30s' } });

  it('in the bootstrap configuration, checked as ha-node checks a PATCH /config', () => {
    const desired = desiredDynamicConfig(cluster, target);
    assert.deepEqual(desired.standby_cluster, { host: '127.1.0.9', port: 5432, recovery_min_apply_delay: 90_000 });
    assert.deepEqual(validateDynamicConfig(desired as never), []);
    const settings = haNodeConfig({ cluster, operatorVersion: '9.9.9', standby: target });
    assert.deepEqual(JSON.parse(settings.bootstrapConfig as string), desired);
    assert.equal('standby_cluster' in desiredDynamicConfig(cluster), false, 'no resolved source: no standby_cluster');
  });

  it('as a PATCH that removes it to promote, and resets keys dropped from it', () => {
    const current = desiredDynamicConfig(cluster, target);
    const promoted = configPatch(desiredDynamicConfig(cluster), current);
    assert.equal(promoted.standby_cluster, null);
    const withoutDelay = sampleCluster({ replica: { source: { cluster: 'src' } } });
    assert.deepEqual(configPatch(desiredDynamicConfig(withoutDelay, target), current).standby_cluster, { host: '127.1.0.9', port: 5432, recovery_min_apply_delay: null });
    assert.equal('standby_cluster' in configPatch(desiredDynamicConfig(sampleCluster()), desiredDynamicConfig(sampleCluster())), false);
  });

  it('converts spec durations to milliseconds', () => {
    assert.equal(durationMs('250ms'), 250);
    assert.equal(durationMs('1h2m3s'), 3_723_000);
  });
});

describe('standby status and the chain of sources', () => {
  it('follows a chain of standby clusters by their specs', () => {
    assert.deepEqual(followedCluster({ metadata: { namespace: 'db' }, spec: { replica: { source: { cluster: 'a' } } } }), { namespace: 'db', name: 'a' });
    assert.deepEqual(followedCluster({ metadata: { namespace: 'db' }, spec: { replica: { source: { cluster: 'a', namespace: 'x' } } } }), { namespace: 'x', name: 'a' });
    assert.equal(followedCluster({ metadata: { namespace: 'db' }, spec: { replica: { enabled: false, source: { cluster: 'a' } } } }), undefined, 'a promoted cluster ends the chain');
    assert.equal(followedCluster({ spec: {} }), undefined);
    assert.equal(describeReplicaSource(sampleCluster({ replica: { source: { host: '127.0.0.9', credentialsSecret: 's' } } })), '127.0.0.9:5432');
  });

  it('reports standby, then primary once ha-node shows a leader that is no standby leader', () => {
    const standby = sampleCluster({ replica: { source: { cluster: 'src' } } });
    assert.deepEqual(replicaStatusOf(standby, 'db/src', [{ name: 'demo-0', role: 'standby_leader' }], now), { status: { role: 'standby', source: 'db/src' }, promoted: false });
    const disabled = sampleCluster({ replica: { enabled: false, source: { cluster: 'src' } } });
    disabled.status = { replica: { role: 'standby', source: 'db/src' } };
    assert.deepEqual(replicaStatusOf(disabled, 'db/src', [{ name: 'demo-0', role: 'standby_leader' }], now), { status: { role: 'standby', source: 'db/src' }, promoted: false }, 'asked, not yet done');
    const done = replicaStatusOf(disabled, 'db/src', [{ name: 'demo-0', role: 'leader' }], now);
    assert.deepEqual(done, { status: { role: 'primary', source: 'db/src', promotedAt: '2026-11-25T03:00:00Z' }, promoted: true });
    disabled.status = { replica: done.status! };
    assert.deepEqual(replicaStatusOf(disabled, 'db/src', [{ name: 'demo-0', role: 'leader' }], now), { status: done.status, promoted: false }, 'the Event once');
    assert.deepEqual(replicaStatusOf(sampleCluster(), undefined, [], now), { promoted: false });
  });
});
