import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterDocument } from '../../../sidecar/ha-node/api/cluster-document.js';
import { healthStatus } from '../../../sidecar/ha-node/api/health-rules.js';
import { renderMetrics } from '../../../sidecar/ha-node/api/metrics-text.js';
import { nodeDocument } from '../../../sidecar/ha-node/api/node-document.js';
import type { ClusterView, MemberRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { memberRecord } from '../../../sidecar/ha-node/ha/records/member-record.js';
import { defaultConfig, effectiveConfig } from '../../../sidecar/ha-node/ha/settings.js';
import type { NodeSnapshot } from '../../../sidecar/ha-node/ha/snapshot.js';
import { describeSource, followsSource, remoteAddress } from '../../../sidecar/ha-node/ha/duties/standby-duties.js';
import { describeProblems, validateDynamicConfig } from '../../../sidecar/ha-node/ops/config-validate.js';
import { buildServerConf } from '../../../sidecar/ha-node/postgres/conf.js';
import { sameSource, standbySourceOf, standbySourceProblems, standbySourceSettings } from '../../../sidecar/ha-node/postgres/standby-source.js';
import type { ServerStatus } from '../../../sidecar/ha-node/postgres/status.js';

/** The pure parts of standby clusters: the standby_cluster checks, recovery settings, roles and health codes. */

const replayingStatus: ServerStatus = {
  inRecovery: true,
  postmasterStartTime: '2026-11-22 10:00:00.000000+00:00',
  serverVersion: 150018,
  timeline: 1,
  systemIdentifier: '7711',
  receivedLocation: 4000,
  replayedLocation: 4000,
  replayedTimestamp: null,
  paused: false,
  replicationState: 'streaming',
  replication: [],
  synchronousStandbyNames: '',
};

const source = { host: '127.0.0.9', port: 6543 };

function member(name: string): MemberRecord {
  return {
    name,
    conn_url: '',
    api_url: `http://${name}/ha`,
    host: name,
    port: 5432,
    role: 'replica',
    state: 'running',
    tags: {},
    version: 'test',
    heartbeat: 0,
  };
}

function snapshot(extra: Partial<NodeSnapshot>): NodeSnapshot {
  const cluster: ClusterView = {
    leader: { holder: 'a', ttl: 30, transitions: 0, optime: 4000 },
    leaderRecord: { holder: 'a', ttl: 30, transitions: 0, optime: 4000 },
    config: { standby_cluster: source },
    history: [],
    members: [member('a'), member('b')],
  };
  return {
    name: 'a',
    scope: 'demo',
    version: '1.0.0',
    tags: {},
    dbState: 'running',
    offlineRole: 'replica',
    isLeader: true,
    cluster,
    failsafeActive: false,
    paused: false,
    dcsLastSeen: 0,
    pendingRestart: false,
    lastLoopAt: 0,
    config: { ...defaultConfig, standby_cluster: source },
    status: replayingStatus,
    ...extra,
  };
}

describe('standby_cluster validation', () => {
  it("accepts Patroni's keys and refuses each bad value naming its field", () => {
    const full = {
      host: 'source.example',
      port: 5432,
      primary_slot_name: 'standby_1',
      restore_command: 'cp /archive/%f %p',
      archive_cleanup_command: 'pg_archivecleanup /archive %r',
      recovery_min_apply_delay: '5min',
    };
    assert.deepEqual(standbySourceProblems(full), []);
    assert.deepEqual(standbySourceProblems({ restore_command: 'cp /archive/%f %p' }), [], 'a WAL archive alone is a source');
    assert.deepEqual(standbySourceProblems({ host: '127.0.0.2', recovery_min_apply_delay: 60000 }), []);
    const cases: [unknown, string][] = [
      [{ host: 'x', port: 0 }, 'standby_cluster.port'],
      [{ host: 'x', port: 5432.5 }, 'standby_cluster.port'],
      [{ host: "x' y" }, 'standby_cluster.host'],
      [{ host: 'x', primary_slot_name: 'Bad-Slot' }, 'standby_cluster.primary_slot_name'],
      [{ host: 'x', restore_command: 'cp %f %p\nrestore_command = evil' }, 'standby_cluster.restore_command'],
      [{ host: 'x', archive_cleanup_command: '' }, 'standby_cluster.archive_cleanup_command'],
      [{ host: 'x', recovery_min_apply_delay: 'soon' }, 'standby_cluster.recovery_min_apply_delay'],
      [{ host: 'x', recovery_min_apply_delay: -1 }, 'standby_cluster.recovery_min_apply_delay'],
      [{ host: 'x', create_replica_methods: [] }, 'standby_cluster.create_replica_methods'],
      [{ port: 5432 }, 'standby_cluster'],
      [[], 'standby_cluster'],
      [null, 'standby_cluster'],
    ];
    for (const [value, field] of cases) {
      const problems = standbySourceProblems(value);
      assert.equal(problems[0]?.field, field, JSON.stringify(value));
      assert.match(describeProblems(validateDynamicConfig({ ttl: 30, standby_cluster: value as never })), new RegExp(`^invalid configuration: "${field}"`));
    }
  });

  it('enters the effective configuration only when valid (a hand-edited DCS object must not stop the loop)', () => {
    assert.deepEqual(effectiveConfig(defaultConfig, { standby_cluster: source }).standby_cluster, source);
    assert.equal(effectiveConfig(defaultConfig, { standby_cluster: { port: 'x' } }).standby_cluster, undefined);
    assert.equal('standby_cluster' in effectiveConfig(defaultConfig, {}), false);
    assert.equal(standbySourceOf(null), undefined);
  });
});

describe('standby leader recovery settings', () => {
  it('streams from the source with its slot and carries the archive settings', () => {
    const full = { ...source, primary_slot_name: 'stb', restore_command: "cp '/a/%f' %p", recovery_min_apply_delay: '1min' };
    const conf = buildServerConf({
      listenAddress: '127.0.0.2',
      port: 5432,
      socketDir: '/tmp',
      clusterName: 'stb',
      parameters: {},
      standby: { primaryConninfo: 'host=127.0.0.9', slotName: 'stb', settings: standbySourceSettings(full) },
    });
    assert.match(conf, /^primary_slot_name = 'stb'$/m);
    assert.match(conf, /^restore_command = 'cp ''\/a\/%f'' %p'$/m);
    assert.match(conf, /^recovery_min_apply_delay = '1min'$/m);
    assert.doesNotMatch(conf, /archive_cleanup_command/);
    assert.deepEqual(remoteAddress({ restore_command: 'x' }), { name: 'standby_cluster', host: '', port: 5432, source: { restore_command: 'x' } });
    assert.equal(describeSource(full), '127.0.0.9:6543 and restore_command');
  });

  it('re-points only when the source changed, whatever the key order', () => {
    assert.equal(followsSource(remoteAddress({ port: 6543, host: '127.0.0.9' }), source), true);
    assert.equal(followsSource(remoteAddress({ ...source, port: 6544 }), source), false);
    assert.equal(followsSource({ name: 'a', host: '127.0.0.9', port: 6543 }, source), false, 'following a member is not following the source');
    assert.equal(followsSource(null, source), false);
    assert.equal(sameSource(undefined, undefined), true);
  });
});

describe('standby leader role', () => {
  const leader = snapshot({});
  const cascading = snapshot({ name: 'b', isLeader: false });

  it('answers the health endpoints as Patroni 4.1 does on a standby leader', () => {
    const expected: Record<string, [number, number]> = {
      '/standby-leader': [200, 503],
      '/standby_leader': [200, 503],
      '/leader': [200, 503],
      '/read-only': [200, 200],
      '/read-only-sync': [200, 503],
      '/read-only-quorum': [200, 503],
      '/readiness': [200, 200],
      '/': [503, 503],
      '/primary': [503, 503],
      '/read-write': [503, 503],
      '/replica': [503, 200],
      '/async': [503, 200],
    };
    for (const [path, [onLeader, onReplica]] of Object.entries(expected)) {
      assert.equal(healthStatus(path, {}, leader), onLeader, `${path} on the standby leader`);
      assert.equal(healthStatus(path, {}, cascading), onReplica, `${path} on a cascading replica`);
    }
    const promoted = snapshot({ status: { ...replayingStatus, inRecovery: false, location: 5000 }, config: defaultConfig });
    assert.equal(healthStatus('/standby-leader', {}, promoted), 503);
    assert.equal(healthStatus('/primary', {}, promoted), 200);
  });

  it('names the role in the node, member and cluster documents and the metrics', () => {
    assert.equal(nodeDocument(leader).role, 'standby_leader');
    assert.equal(nodeDocument(cascading).role, 'replica');
    assert.equal(nodeDocument(snapshot({ config: defaultConfig })).role, 'replica', 'the lock holder of a normal cluster that still replays');
    const metrics = renderMetrics(leader);
    assert.match(metrics, /^ha_standby_leader\{scope="demo",name="a"\} 1$/m);
    assert.match(metrics, /^ha_replica\{scope="demo",name="a"\} 0$/m);
    assert.match(metrics, /^ha_primary\{scope="demo",name="a"\} 0$/m);
    assert.match(renderMetrics(cascading), /^ha_replica\{scope="demo",name="b"\} 1$/m);
    const listen = { settings: { connectHost: '127.0.0.2', port: 5432 }, state: 'running' as const };
    assert.equal(memberRecord({ name: 'a', apiUrl: '', tags: {}, version: 't' }, listen, leader, 0, true).role, 'standby_leader');
    assert.equal(memberRecord({ name: 'b', apiUrl: '', tags: {}, version: 't' }, listen, cascading, 0).role, 'replica');
    assert.equal('standby_demotion' in nodeDocument(leader), false);
    const demoted = nodeDocument(
      snapshot({ demotion: { systemIdentifier: '7711', timeline: 1, checkpointLocation: 0x3000028, at: '2026-11-25T03:00:00.000Z' } }),
    );
    assert.deepEqual(demoted.standby_demotion, {
      database_system_identifier: '7711',
      timeline: 1,
      checkpoint_location: 0x3000028,
      checkpoint_lsn: '0/3000028',
      at: '2026-11-25T03:00:00.000Z',
    });
    const roles = (clusterDocument(leader.cluster!, 'demo').members as { role: string }[]).map((m) => m.role);
    assert.deepEqual(roles, ['standby_leader', 'replica']);
    const normal = clusterDocument({ ...leader.cluster!, config: {} }, 'demo').members as { role: string }[];
    assert.equal(normal[0]?.role, 'leader');
  });
});

describe('standby_cluster.repository: the archive of the backup source', () => {
  const archive = "pgbackrest '--config=/data/pgbackrest/source.conf' '--stanza=src' --no-archive-async archive-get %f %p";

  it('is a valid source alone, and a boolean', () => {
    assert.deepEqual(validateDynamicConfig({ standby_cluster: { repository: true } } as never), []);
    assert.match(
      describeProblems(validateDynamicConfig({ standby_cluster: { repository: 'yes' } } as never)),
      /"standby_cluster\.repository" must be true or false/,
    );
    assert.match(
      describeProblems(validateDynamicConfig({ standby_cluster: { repository: false } } as never)),
      /"standby_cluster" needs host \(streaming\), restore_command or repository/,
    );
  });

  it("becomes this member's restore_command, unless the source names its own", () => {
    const base = { ...defaultConfig, standby_archive_command: archive };
    assert.equal(effectiveConfig(base, { standby_cluster: { repository: true } } as never).standby_cluster?.restore_command, archive);
    assert.equal(
      effectiveConfig(base, { standby_cluster: { repository: true, restore_command: 'cp /a/%f %p' } } as never).standby_cluster?.restore_command,
      'cp /a/%f %p',
    );
    assert.equal(
      effectiveConfig(base, { standby_cluster: { host: '127.0.0.9' } } as never).standby_cluster?.restore_command,
      undefined,
      'no archive unless asked for',
    );
    assert.equal(
      effectiveConfig(defaultConfig, { standby_cluster: { repository: true } } as never).standby_cluster?.restore_command,
      undefined,
      'a member without the backup source has none',
    );
  });
});
