import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationMs } from '../../api/crd/replica-types.js';
import { InvalidSpecError } from '../../api/crd/validate.js';
import { haNodeConfig } from '../../operator/builders/configmap.js';
import { configPatch, desiredDynamicConfig } from '../../operator/builders/dynamic-config.js';
import { validateDynamicConfig } from '../../sidecar/ha-node/ops/config-validate.js';
import { describeReplicaSource, followedCluster } from '../../operator/reconcile/replica-source.js';
import { replicaStatusOf, systemIdentifierOf } from '../../operator/reconcile/replica-status.js';
import { planRole } from '../../operator/reconcile/replica-role.js';
import { sampleCluster } from './fixtures.js';
import { haNodeBackupSettings } from '../../operator/builders/backup.js';
import { namedRestoreField } from '../../operator/reconcile/backup.js';
import { parseBackupConfig } from '../../api/ha-node/backup-settings.js';

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
    assert.deepEqual(sampleCluster({ replica: { source: { cluster: 'src' } } }).spec.replica, {
      enabled: true,
      source: { cluster: 'src' },
      promotion: 'Immediate',
    });
    assert.equal(
      sampleCluster({ replica: { source: { host: '127.0.0.9', port: 6432, credentialsSecret: 'src-repl' }, minApplyDelay: '5m' } }).spec.replica?.minApplyDelay,
      '5m',
    );
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
    assert.equal(
      refusal({ replica: { source: { cluster: 'demo', namespace: 'other' } } }),
      'accepted',
      'the same name in another namespace is another cluster',
    );
  });
});

describe('spec.replica reaches ha-node as standby_cluster', () => {
  const cluster = sampleCluster({ replica: { source: { cluster: 'src' }, minApplyDelay: '1m30s' } });

  it('in the bootstrap configuration, checked as ha-node checks a PATCH /config', () => {
    const desired = desiredDynamicConfig(cluster, target);
    assert.deepEqual(desired.standby_cluster, { host: '127.1.0.9', port: 5432, recovery_min_apply_delay: 90_000 });
    assert.deepEqual(validateDynamicConfig(desired as never), []);
    const settings = haNodeConfig({ cluster, operatorVersion: '9.9.9', standby: target });
    assert.deepEqual(settings.bootstrapConfig, desired);
    assert.equal('standby_cluster' in desiredDynamicConfig(cluster), false, 'no resolved source: no standby_cluster');
  });

  it('as a PATCH that removes it to promote, and resets keys dropped from it', () => {
    const current = desiredDynamicConfig(cluster, target);
    const promoted = configPatch(desiredDynamicConfig(cluster), current);
    assert.equal(promoted.standby_cluster, null);
    const withoutDelay = sampleCluster({ replica: { source: { cluster: 'src' } } });
    assert.deepEqual(configPatch(desiredDynamicConfig(withoutDelay, target), current).standby_cluster, {
      host: '127.1.0.9',
      port: 5432,
      recovery_min_apply_delay: null,
    });
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
    assert.deepEqual(followedCluster({ metadata: { namespace: 'db' }, spec: { replica: { source: { cluster: 'a', namespace: 'x' } } } }), {
      namespace: 'x',
      name: 'a',
    });
    assert.equal(
      followedCluster({ metadata: { namespace: 'db' }, spec: { replica: { enabled: false, source: { cluster: 'a' } } } }),
      undefined,
      'a promoted cluster ends the chain',
    );
    assert.equal(followedCluster({ spec: {} }), undefined);
    assert.equal(describeReplicaSource(sampleCluster({ replica: { source: { host: '127.0.0.9', credentialsSecret: 's' } } })), '127.0.0.9:5432');
  });

  it('reports standby, then primary once ha-node shows a leader that is no standby leader, with lag and the source timeline', () => {
    const standby = sampleCluster({ replica: { source: { cluster: 'src' } } });
    const leading = [{ name: 'demo-0', role: 'standby_leader', source_lag: 4096, source_timeline: 3, system_identifier: '7001' }];
    const following = replicaStatusOf(standby, 'db/src', planRole(standby, leading, {}), leading, now);
    assert.deepEqual(following.status, { role: 'standby', source: 'db/src', step: 'Following', lagBytes: 4096, sourceTimeline: 3 });
    assert.equal(following.condition?.status, 'False');
    assert.equal(systemIdentifierOf(leading), '7001');
    const disabled = sampleCluster({ replica: { enabled: false, source: { cluster: 'src' } } });
    disabled.status = { replica: following.status! };
    const asked = replicaStatusOf(disabled, 'db/src', planRole(disabled, leading, {}), leading, now);
    assert.equal(asked.status?.step, 'Promoting', 'asked, not yet done');
    assert.deepEqual(asked.condition && [asked.condition.status, asked.condition.reason], ['True', 'Promoting']);
    disabled.status = { replica: asked.status! };
    const primary = [{ name: 'demo-0', role: 'leader' }];
    const done = replicaStatusOf(disabled, 'db/src', planRole(disabled, primary, {}), primary, now);
    assert.deepEqual(done.status, { role: 'primary', source: 'db/src', step: 'Promoted', promotedAt: '2026-11-25T03:00:00Z' });
    assert.deepEqual(
      done.events.map((e) => e.reason),
      ['Promoted'],
    );
    disabled.status = { replica: done.status! };
    const again = replicaStatusOf(disabled, 'db/src', planRole(disabled, primary, {}), primary, now);
    assert.deepEqual([again.status, again.events], [done.status, []], 'the Event once');
    const plain = sampleCluster();
    assert.deepEqual(replicaStatusOf(plain, undefined, planRole(plain, [], {}), [], now), { events: [] });
  });
});

describe('the controlled swap, step by step (pure)', () => {
  const demotion = { system_identifier: '7001', timeline: 1, checkpoint_location: 50_000, checkpoint_lsn: '0/C350', at: '2026-11-25T03:00:00Z' };

  it('a primary asked to follow a cluster waits while that cluster still follows it, then demotes', () => {
    const old = sampleCluster({ replica: { source: { cluster: 'b' } } }, 'a');
    old.status = { currentPrimary: 'a-0' };
    const primary = [{ name: 'a-0', role: 'leader', system_identifier: '7001' }];
    const waiting = planRole(old, primary, { sourceFollowsUs: true });
    assert.deepEqual([waiting.step, waiting.followSource], ['WaitingForPeer', false], 'no demotion while b is a standby of a');
    const demoting = planRole(old, primary, { sourceFollowsUs: false });
    assert.deepEqual([demoting.role, demoting.step, demoting.followSource], ['primary', 'Demoting', true]);
    old.status = { currentPrimary: 'a-0', replica: { role: 'primary', step: 'Demoting' } };
    const demoted = [{ name: 'a-0', role: 'standby_leader', standby_demotion: demotion }];
    const followed = replicaStatusOf(old, 'db/b', planRole(old, demoted, {}), demoted, now);
    assert.deepEqual([followed.status?.role, followed.status?.step, followed.status?.demotion?.checkpointLsn], ['standby', 'Following', '0/C350']);
    assert.deepEqual(
      followed.events.map((e) => e.reason),
      ['Demoted'],
    );
  });

  it('a standby promoting after its source demotes waits for the demotion, replays past its checkpoint, then promotes', () => {
    const next = sampleCluster({ replica: { enabled: false, promotion: 'AfterSourceDemotion', source: { cluster: 'a' } } }, 'b');
    next.status = { replica: { role: 'standby', step: 'Following', sourceTimeline: 1 } };
    const leading = [{ name: 'b-0', role: 'standby_leader' }];
    assert.deepEqual(planRole(next, leading, { sourceFollowsUs: false }).step, 'WaitingForSourceDemotion', 'a is not yet set to follow b');
    const undemoted = planRole(next, leading, { sourceFollowsUs: true, sourceLeader: { role: 'primary' } });
    assert.deepEqual([undemoted.step, undemoted.followSource, undemoted.swapping], ['WaitingForSourceDemotion', true, true]);
    const stale = planRole(next, leading, { sourceFollowsUs: true, sourceLeader: { role: 'primary', standby_demotion: demotion } });
    assert.equal(stale.step, 'WaitingForSourceDemotion', 'a demotion record of a leader that is primary again is an old one');
    const behind = planRole(next, leading, {
      sourceFollowsUs: true,
      sourceLeader: { role: 'standby_leader', standby_demotion: demotion },
      ownLeader: { xlog: { replayed_location: 50_000 } },
    });
    assert.deepEqual([behind.step, behind.followSource], ['CatchingUp', true]);
    const past = planRole(next, leading, {
      sourceFollowsUs: true,
      sourceLeader: { role: 'replica', standby_demotion: demotion },
      ownLeader: { xlog: { replayed_location: 50_120 } },
    });
    assert.deepEqual([past.step, past.followSource], ['Promoting', false]);
    next.status = { replica: { role: 'standby', step: 'Following', sourceTimeline: 2 } };
    const earlier = planRole(next, leading, {
      sourceFollowsUs: true,
      sourceLeader: { role: 'standby_leader', standby_demotion: demotion },
      ownLeader: { xlog: { replayed_location: 90_000 } },
    });
    assert.equal(earlier.step, 'WaitingForSourceDemotion', 'a demotion on an earlier timeline than the one followed belongs to an earlier swap');
  });

  it('needs a DatabaseCluster source to promote after its demotion, and keeps replica once set', () => {
    assert.match(
      refusal({ replica: { enabled: false, promotion: 'AfterSourceDemotion', source: { host: '127.0.0.9', credentialsSecret: 's' } } }),
      /promotion AfterSourceDemotion needs a DatabaseCluster source/,
    );
  });
});

describe('spec.replica.source.repository: a standby of a backup repository', () => {
  const backup = { repositories: [{ name: 'vault', volume: { size: '1Gi' } }] };

  it('takes a repository alone (with stanza and credentials) or beside a cluster, and refuses what cannot work', () => {
    const alone = sampleCluster({ backup, replica: { source: { repository: 'vault', stanza: 'src', credentialsSecret: 'src-repl' } } });
    assert.equal(alone.spec.replica?.source.repository, 'vault');
    assert.equal(refusal({ backup, replica: { source: { cluster: 'src', repository: 'vault' } } }), 'accepted');
    const cases: [Record<string, unknown>, Record<string, unknown> | undefined, RegExp][] = [
      [{ repository: 'vault', credentialsSecret: 's' }, backup, /repository needs stanza/],
      [{ repository: 'vault', stanza: 'src' }, backup, /repository alone needs credentialsSecret/],
      [{ cluster: 'src', stanza: 'src' }, backup, /stanza goes with repository/],
      [{ cluster: 'src', repository: 'elsewhere' }, backup, /spec\.replica\.source\.repository must name one of backup\.repositories/],
      [{ cluster: 'src', repository: 'vault' }, undefined, /spec\.replica\.source\.repository must name one of backup\.repositories/],
    ];
    for (const [source, withBackup, message] of cases)
      assert.match(refusal({ ...(withBackup ? { backup: withBackup } : {}), replica: { source } }), message, JSON.stringify(source));
  });

  it('reaches ha-node as a standby recovery of the source stanza and standby_cluster.repository, which ha-node accepts', () => {
    const cluster = sampleCluster({ backup, replica: { source: { repository: 'vault', stanza: 'src', credentialsSecret: 'src-repl' } } });
    const desired = desiredDynamicConfig(cluster, { repository: true });
    assert.deepEqual(desired.standby_cluster, { repository: true });
    assert.deepEqual(validateDynamicConfig(desired as never), []);
    const settings = parseBackupConfig(JSON.stringify(haNodeBackupSettings({ cluster, operatorVersion: '9.9.9' })));
    assert.equal(settings.recovery?.stanza, 'src');
    assert.equal(settings.recovery?.standby, true);
    assert.match(JSON.stringify(settings.recovery?.repository), /vault\/.*\/src"/, "the source's stanza path in the repository");
    assert.deepEqual(
      desiredDynamicConfig(cluster, { ...target, repository: true }).standby_cluster,
      { host: '127.1.0.9', port: 5432, repository: true },
      'streaming with the archive as fallback',
    );
    assert.equal(describeReplicaSource(cluster), 'repository vault (stanza src)');
  });

  it('names spec.replica.source.repository in a failed restore', () => {
    const cluster = sampleCluster({ backup, replica: { source: { cluster: 'src', repository: 'vault' } } });
    const verdict = namedRestoreField(
      { status: 'False', reason: 'RestoreFailed', message: 'recovery.stanza: no stanza src in the source repository' },
      cluster,
    );
    assert.match(verdict.message, /^spec\.replica\.source\.repository \(vault\): recovery\.stanza: no stanza src/);
  });
});
