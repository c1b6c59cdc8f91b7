import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterDocument } from '../../../sidecar/ha-node/api/cluster-document.js';
import { cachedServerAlive, withLiveServer } from '../../../sidecar/ha-node/api/server-alive.js';
import { healthStatus, livenessStatus, replicationLag, BadQuery } from '../../../sidecar/ha-node/api/health-rules.js';
import { parseLag } from '../../../sidecar/ha-node/api/lag.js';
import { renderMetrics, versionNumber } from '../../../sidecar/ha-node/api/metrics-text.js';
import { nodeDocument } from '../../../sidecar/ha-node/api/node-document.js';
import { LeaderObserver, type ObserverClock } from '../../../sidecar/ha-node/dcs/leader-observer.js';
import { leaderFromLease, memberLeaseName } from '../../../sidecar/ha-node/dcs/lease-codec.js';
import type { ClusterView, MemberRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { fenceDeadlineFor } from '../../../sidecar/ha-node/fence/deadline.js';
import { raceVerdict, type PeerReport } from '../../../sidecar/ha-node/ha/election/election.js';
import { defaultConfig, effectiveConfig } from '../../../sidecar/ha-node/ha/settings.js';
import { nextSyncStep, type SyncInput } from '../../../sidecar/ha-node/ha/sync/sync-plan.js';
import type { NodeSnapshot } from '../../../sidecar/ha-node/ha/snapshot.js';
import { parseTimelineHistory } from '../../../sidecar/ha-node/ha/records/timeline-history.js';
import { buildServerConf, connInfo, renderValue, slotNameFor } from '../../../sidecar/ha-node/postgres/conf.js';
import { formatLsn, parseLsn } from '../../../sidecar/ha-node/postgres/lsn.js';
import { dbStateNumber, dbStateText } from '../../../sidecar/ha-node/postgres/state.js';
import type { ServerStatus } from '../../../sidecar/ha-node/postgres/status.js';

/** The pure parts of ha-node: decisions, documents and formats, without processes. */

class FakeClock implements ObserverClock {
  time = 0;
  timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  now(): number {
    return this.time;
  }
  setTimer(ms: number, fn: () => void): { cancel(): void } {
    const timer = { at: this.time + ms, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }
  advance(ms: number): void {
    this.time += ms;
    for (const timer of this.timers) {
      if (!timer.cancelled && timer.at <= this.time) {
        timer.cancelled = true;
        timer.fn();
      }
    }
  }
}

const primaryStatus: ServerStatus = {
  inRecovery: false,
  postmasterStartTime: '2026-11-22 10:00:00.000000+00:00',
  serverVersion: 150018,
  timeline: 2,
  systemIdentifier: '7711',
  location: 5000,
  replayedTimestamp: null,
  paused: false,
  replication: [{ usename: 'replicator', application_name: 'b', client_addr: '127.0.0.3', state: 'streaming', sync_state: 'async', sync_priority: 0 }],
  synchronousStandbyNames: '',
};

const replicaStatus: ServerStatus = {
  ...primaryStatus,
  inRecovery: true,
  location: undefined,
  receivedLocation: 4000,
  replayedLocation: 3000,
  replicationState: 'streaming',
  replication: [],
};

function member(name: string, extra: Partial<MemberRecord> = {}): MemberRecord {
  return {
    name,
    conn_url: '',
    api_url: `http://${name}/ha`,
    host: name,
    port: 5432,
    role: 'replica',
    state: 'running',
    tags: {},
    version: '0.1.0',
    heartbeat: 0,
    ...extra,
  };
}

function snapshot(extra: Partial<NodeSnapshot>): NodeSnapshot {
  const cluster: ClusterView = {
    leader: { holder: 'a', ttl: 30, transitions: 0, optime: 4500 },
    leaderRecord: { holder: 'a', ttl: 30, transitions: 0, optime: 4500 },
    history: [],
    members: [member('a'), member('b')],
  };
  return {
    name: 'b',
    scope: 'demo',
    version: '1.4.12',
    tags: {},
    dbState: 'running',
    offlineRole: 'replica',
    isLeader: false,
    cluster,
    failsafeActive: false,
    paused: false,
    dcsLastSeen: 1795000000,
    pendingRestart: false,
    lastLoopAt: 0,
    config: { ...defaultConfig, ttl: 10 },
    ...extra,
  };
}

describe('log positions and sizes', () => {
  it('round-trips LSNs and parses lag sizes with units', () => {
    assert.equal(parseLsn('16/B374D848'), 0x16 * 2 ** 32 + 0xb374d848);
    assert.equal(formatLsn(parseLsn('0/3000060')!), '0/3000060');
    assert.equal(parseLsn('nonsense'), undefined);
    assert.equal(parseLag('1048576'), 1048576);
    assert.equal(parseLag('16kB'), 16384);
    assert.equal(parseLag('64MB'), 64 * 1024 * 1024);
    assert.equal(parseLag('1GB'), 1024 ** 3);
    assert.equal(parseLag('lots'), undefined);
    assert.equal(parseLag('-5'), undefined);
  });
});

describe('leader expiry by local observation', () => {
  it('expires ttl after the last observed change and fires its timer then', () => {
    const clock = new FakeClock();
    let fired = 0;
    const observer = new LeaderObserver(clock, () => (fired += 1));
    const record = { holder: 'a', ttl: 10, transitions: 1, renewTime: 't1', resourceVersion: '5' };
    assert.equal(observer.observe(record), true);
    clock.advance(9_000);
    assert.equal(observer.observe({ ...record }), false, 'an unchanged record proves nothing');
    assert.ok(observer.current());
    clock.advance(1_010);
    assert.equal(observer.current(), undefined);
    assert.equal(fired, 1);
    observer.observe({ ...record, renewTime: 't2', resourceVersion: '6' });
    clock.advance(9_999);
    assert.ok(observer.current(), 'a renewal restarts the ttl');
    assert.equal(fired, 1);
    observer.observe({ ...record, holder: '', resourceVersion: '7' });
    assert.equal(observer.current(), undefined, 'a released lease has no leader');
  });

  it('counts our own write from the moment it started', () => {
    const clock = new FakeClock();
    const observer = new LeaderObserver(clock, () => undefined);
    clock.advance(5_000);
    observer.observeOwnWrite({ holder: 'me', ttl: 10, transitions: 0 }, 1_000);
    assert.equal(observer.remainingMs(), 6_000);
  });
});

describe('lease codec', () => {
  it('reads the leader spec and annotations, and names member leases safely', () => {
    const record = leaderFromLease({
      metadata: { resourceVersion: '9', annotations: { optime: '123', slots: '{"b":100}' } },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 10, leaseTransitions: 3 },
    });
    assert.deepEqual(record, {
      holder: 'a',
      ttl: 10,
      acquireTime: undefined,
      renewTime: undefined,
      transitions: 3,
      optime: 123,
      releasedCheckpoint: undefined,
      releasedBy: undefined,
      slots: { b: 100 },
      failsafe: undefined,
      resourceVersion: '9',
    });
    assert.equal(memberLeaseName('demo', 'Pod_0'), 'demo-member-pod-0');
  });
});

describe('leader race', () => {
  const cluster: ClusterView = { leaderRecord: { holder: 'a', ttl: 10, transitions: 1, optime: 10_000 }, history: [[1, 100, 'x', 't']], members: [] };
  const self = { name: 'b', walPosition: 9_990, timeline: 2, nofailover: false, isPrimary: false };
  const config = { ...defaultConfig };

  it('lets the most advanced eligible member race', () => {
    const peers: PeerReport[] = [
      { name: 'c', reachable: true, role: 'replica', state: 'running', walPosition: 9_000 },
      { name: 'a', reachable: false },
    ];
    assert.deepEqual(raceVerdict(self, cluster, config, peers), { ok: true });
  });

  it('stops for a peer ahead, a live primary, nofailover, lag and timeline', () => {
    const ahead: PeerReport = { name: 'c', reachable: true, role: 'replica', state: 'running', walPosition: 9_995 };
    assert.equal(raceVerdict(self, cluster, config, [ahead]).ok, false);
    assert.equal(raceVerdict(self, cluster, config, [{ ...ahead, nofailover: true }]).ok, true, 'a nofailover peer does not block');
    assert.equal(raceVerdict(self, cluster, config, [{ name: 'a', reachable: true, role: 'primary', state: 'running', walPosition: 0 }]).ok, false);
    assert.equal(raceVerdict({ ...self, nofailover: true }, cluster, config, []).ok, false);
    assert.equal(raceVerdict({ ...self, walPosition: 10 }, cluster, { ...config, maximum_lag_on_failover: 1000 }, []).ok, false);
    assert.equal(raceVerdict({ ...self, timeline: 1 }, cluster, { ...config, check_timeline: true }, []).ok, false);
    assert.equal(raceVerdict({ ...self, timeline: 2 }, cluster, { ...config, check_timeline: true }, []).ok, true);
  });

  it('honours a pending manual failover and synchronous membership', () => {
    const withFailover = { ...cluster, failover: { member: 'c' } };
    assert.equal(raceVerdict(self, withFailover, config, [{ name: 'c', reachable: true, walPosition: 0 }]).ok, false);
    assert.equal(raceVerdict({ ...self, name: 'c', walPosition: 0 }, withFailover, config, [{ name: 'b', reachable: true, walPosition: 9_990 }]).ok, true);
    assert.deepEqual(
      raceVerdict({ ...self, name: 'c', nofailover: true }, withFailover, config, []),
      { ok: false, reason: 'tagged nofailover' },
      'named but tagged nofailover',
    );
    assert.equal(
      raceVerdict(self, withFailover, config, [{ name: 'c', reachable: true, walPosition: 0, nofailover: true }]).ok,
      true,
      'a named candidate that may not promote leaves the race open',
    );
    const failsafe = { ...cluster, leaderRecord: { ...cluster.leaderRecord!, failsafe: { a: 'http://a/ha', c: 'http://c/ha' } } };
    assert.deepEqual(raceVerdict(self, failsafe, { ...config, failsafe_mode: true }, []), { ok: false, reason: 'not in the failsafe member list' });
    assert.equal(raceVerdict({ ...self, name: 'c' }, failsafe, { ...config, failsafe_mode: true }, []).ok, true);
    assert.equal(raceVerdict(self, failsafe, config, []).ok, true, 'the list matters only in failsafe mode');
    const sync = { ...cluster, sync: { leader: 'a', sync_standby: ['c'] } };
    assert.equal(raceVerdict(self, sync, { ...config, synchronous_mode: true }, []).ok, false);
  });

  it('in synchronous mode before a standby is named, lets only the former leader race (Patroni: /sync names only the leader)', () => {
    const syncOn = { ...config, synchronous_mode: true };
    const unnamed = { ...cluster, sync: { leader: 'a', sync_standby: [] } };
    // The primary may have acknowledged commits no replica has: promoting one could lose them.
    assert.deepEqual(raceVerdict(self, unnamed, syncOn, []), { ok: false, reason: 'not a synchronous standby' });
    assert.equal(raceVerdict({ ...self, name: 'a' }, unnamed, syncOn, [{ name: 'b', reachable: true, walPosition: 9_990 }]).ok, true);
    // No sync key yet (the leader never ran its synchronous upkeep): the usual health check decides.
    assert.equal(raceVerdict(self, { ...cluster, sync: undefined }, syncOn, []).ok, true);
  });
});

describe('settings', () => {
  it('overlays dynamic config, ignores bad values and keeps loop_wait + 2*retry_timeout <= ttl', () => {
    const config = effectiveConfig(defaultConfig, {
      ttl: 10,
      loop_wait: 'abc' as unknown as number,
      retry_timeout: 4,
      db: { parameters: { work_mem: '8MB' } },
    });
    assert.equal(config.ttl, 10);
    assert.equal(config.loop_wait, 2, 'lowered from the default 10 to fit the ttl');
    assert.equal(config.retry_timeout, 4);
    assert.deepEqual(config.parameters, { work_mem: '8MB' });
  });

  it('fences a safety margin before the lease can expire', () => {
    assert.equal(fenceDeadlineFor(1_000_000, 10), 1_000_000 + 8_000);
    assert.equal(fenceDeadlineFor(1_000_000, 30), 1_000_000 + 24_000);
  });
});

describe('health rules', () => {
  const primary = snapshot({ name: 'a', isLeader: true, status: primaryStatus, offlineRole: 'primary' });
  const replica = snapshot({ status: replicaStatus });

  it('gives leader paths to the lock holder running as primary only', () => {
    for (const path of ['/', '/primary', '/read-write', '/leader']) {
      assert.equal(healthStatus(path, {}, primary), 200, path);
      assert.equal(healthStatus(path, {}, replica), 503, path);
    }
    const crashedWithLock = snapshot({ name: 'a', isLeader: true, status: undefined, dbState: 'crashed', offlineRole: 'primary' });
    assert.equal(healthStatus('/primary', {}, crashedWithLock), 503, 'a primary that does not run gets no clients, lock or not');
    assert.equal(healthStatus('/readiness', {}, crashedWithLock), 503);
    assert.equal(healthStatus('/leader', {}, crashedWithLock), 200, 'the lock alone decides /leader');
    const gone = withLiveServer(primary, () => false);
    assert.equal(healthStatus('/primary', {}, gone), 503, 'a postmaster gone since the last loop');
    assert.equal(gone.dbState, 'crashed');
    assert.equal(
      withLiveServer(primary, () => true),
      primary,
    );
    const server: { pid?: number } = {};
    let clock = 0;
    const alive = cachedServerAlive(
      () => server.pid,
      200,
      () => clock,
    );
    assert.equal(alive(), false, 'no postmaster');
    server.pid = process.pid;
    assert.equal(alive(), false, 'kept for 200 ms');
    clock = 201;
    assert.equal(alive(), true);
    const demoted = snapshot({ name: 'a', isLeader: true, status: replicaStatus });
    assert.equal(healthStatus('/primary', {}, demoted), 503);
    assert.equal(healthStatus('/leader', {}, demoted), 200);
  });

  it('applies lag, replication_state and tag filters to replicas', () => {
    assert.equal(replicationLag(replica), 1500, 'max(leader optime 4500, received 4000) - replayed 3000');
    assert.equal(healthStatus('/replica', { lag: '2000' }, replica), 200);
    assert.equal(healthStatus('/replica', { lag: '1kB' }, replica), 503);
    assert.equal(healthStatus('/replica', { replication_state: 'streaming' }, replica), 200);
    assert.equal(healthStatus('/replica', { replication_state: 'in archive recovery' }, replica), 503);
    const tagged = snapshot({ status: replicaStatus, tags: { zone: 'Z1', nofailover: false } });
    assert.equal(healthStatus('/replica', { tag_zone: 'z1' }, tagged), 200);
    assert.equal(healthStatus('/replica', { tag_zone: 'z2' }, tagged), 503);
    assert.equal(healthStatus('/replica', { tag_nofailover: 'false' }, tagged), 503, 'false tags count as unset');
    assert.equal(healthStatus('/replica', {}, snapshot({ status: replicaStatus, tags: { noloadbalance: true } })), 503);
    assert.throws(() => healthStatus('/replica', { lag: 'x' }, replica), BadQuery);
  });

  it('answers readiness, sync/async and liveness by role', () => {
    assert.equal(healthStatus('/readiness', {}, replica), 200);
    assert.equal(healthStatus('/readiness', { lag: '100' }, replica), 503);
    assert.equal(healthStatus('/readiness', { lag: '100', mode: 'write' }, replica), 503, 'write mode: 4500 - 4000');
    assert.equal(healthStatus('/readiness', { lag: '600', mode: 'write' }, replica), 200);
    assert.equal(healthStatus('/async', {}, replica), 200);
    assert.equal(healthStatus('/sync', {}, replica), 503);
    const sync = snapshot({ status: replicaStatus, cluster: { ...replica.cluster!, sync: { leader: 'a', sync_standby: ['b'] } } });
    assert.equal(healthStatus('/sync', {}, sync), 200);
    assert.equal(healthStatus('/async', {}, sync), 503);
    assert.equal(healthStatus('/no/such', {}, primary), 503);
    assert.equal(livenessStatus({ ...primary, lastLoopAt: 0 }, 9_000), 200);
    assert.equal(livenessStatus({ ...primary, lastLoopAt: 0 }, 11_000), 503, 'primary: ttl');
    assert.equal(livenessStatus({ ...replica, lastLoopAt: 0 }, 19_000), 200, 'replica: 2 x ttl');
    assert.equal(livenessStatus({ ...replica, lastLoopAt: 0 }, 21_000), 503);
    // A cycle still running (a long rewind) counts as alive while it shows progress, and only then.
    assert.equal(livenessStatus({ ...primary, lastLoopAt: 0, lastProgressAt: 50_000 }, 55_000), 200, 'progress within ttl');
    assert.equal(livenessStatus({ ...primary, lastLoopAt: 0, lastProgressAt: 50_000 }, 61_000), 503, 'no progress for ttl');
  });
});

describe('documents and formats', () => {
  it('builds the node document in Patroni key order', () => {
    const doc = nodeDocument(snapshot({ name: 'a', isLeader: true, status: primaryStatus, tags: { nofailover: false, zone: 'a' } }));
    assert.deepEqual(Object.keys(doc), [
      'state',
      'postmaster_start_time',
      'role',
      'server_version',
      'xlog',
      'timeline',
      'replication',
      'dcs_last_seen',
      'tags',
      'database_system_identifier',
      'ha',
    ]);
    assert.deepEqual(doc.tags, { zone: 'a' });
    const down = nodeDocument(snapshot({ status: undefined, dbState: 'creating_replica', offlineRole: 'uninitialized', cluster: undefined }));
    assert.equal(down.state, 'creating replica');
    assert.equal(down.role, 'uninitialized');
    assert.equal(down.cluster_unlocked, true);
  });

  it('renders every metric with scope and name labels', () => {
    const text = renderMetrics(snapshot({ status: replicaStatus }));
    assert.match(text, /^ha_version\{scope="demo",name="b"\} 010412$/m);
    assert.match(text, /^ha_replica\{scope="demo",name="b"\} 1$/m);
    assert.match(text, /^ha_xlog_received_location\{scope="demo",name="b"\} 4000$/m);
    assert.match(text, /^# Values: 0=initdb, 1=initdb_failed, .*14=crashed$/m);
    assert.equal(text.split('\n').filter((l) => l.startsWith('ha_')).length, 23);
    assert.ok(text.endsWith('\n'));
    assert.equal(versionNumber('4.1.4'), '040104');
  });

  it('builds /cluster with lag against the leader position', () => {
    const cluster: ClusterView = {
      leader: { holder: 'a', ttl: 10, transitions: 0, optime: 5000 },
      leaderRecord: { holder: 'a', ttl: 10, transitions: 0, optime: 5000 },
      history: [],
      failover: { leader: 'a', member: 'b', scheduled_at: '2026-11-22T11:00:00+00:00' },
      members: [
        member('b', { xlog_location: 4000, receive_lsn: 4500, replay_lsn: 4000, replication_state: 'streaming', timeline: 1 }),
        member('a', { xlog_location: 5000, timeline: 1 }),
      ],
    };
    const doc = clusterDocument(cluster, 'demo') as { members: Record<string, unknown>[]; scheduled_switchover: unknown };
    assert.deepEqual(
      doc.members.map((m) => [m.name, m.role, m.state]),
      [
        ['a', 'leader', 'running'],
        ['b', 'replica', 'streaming'],
      ],
    );
    assert.equal(doc.members[1]!.lag, 1000);
    assert.equal(doc.members[1]!.receive_lsn, '0/1194');
    assert.deepEqual(doc.scheduled_switchover, { at: '2026-11-22T11:00:00+00:00', from: 'a', to: 'b' });
  });

  it('keeps fixed state numbers and texts', () => {
    assert.equal(dbStateNumber('initdb'), 0);
    assert.equal(dbStateNumber('running'), 5);
    assert.equal(dbStateNumber('crashed'), 14);
    assert.equal(dbStateText('initdb'), 'initializing new cluster');
    assert.equal(dbStateText('start_failed'), 'start failed');
  });

  it('writes server configuration and connection strings with safe quoting', () => {
    assert.equal(renderValue("it's"), "'it''s'");
    assert.equal(renderValue(true), 'on');
    const conf = buildServerConf({
      listenAddress: '127.0.0.2',
      port: 5432,
      socketDir: '/run/pg',
      clusterName: 'demo',
      parameters: { max_connections: 40 },
      standby: { primaryConninfo: connInfo({ host: 'h', port: 1, user: 'u', password: "p'w", applicationName: 'b' }), slotName: slotNameFor('demo-1') },
    });
    assert.match(conf, /^max_connections = 40$/m);
    assert.match(conf, /^primary_slot_name = 'demo_1'$/m);
    // GUC quoting doubles quotes and backslashes around libpq's own escaping: p'w → 'p\'w' → ''p\\''w''.
    assert.ok(conf.includes("password=''p\\\\''w''"), conf);
    assert.match(conf, /^wal_log_hints = on$/m);
  });

  it('parses timeline history files', () => {
    assert.deepEqual(parseTimelineHistory('1\t0/5000028\tno recovery target specified\n\n2\t0/6000000\tno recovery target specified\n'), [
      [1, 0x5000028, 'no recovery target specified'],
      [2, 0x6000000, 'no recovery target specified'],
    ]);
  });
});

describe('synchronous standby upkeep', () => {
  const base: SyncInput = { published: [], keyIsOurs: false, currentNames: '', strict: false, nodeCount: 1, streaming: [], changeLsn: 0 };
  const row = (name: string, flushLsn: number, syncState = 'async') => ({ name, flushLsn, syncState });

  it('chooses the most advanced standby, then publishes it only once it is sync past the change point', () => {
    const choose = nextSyncStep({ ...base, streaming: [row('b', 10), row('c', 20)] });
    assert.deepEqual(choose, { kind: 'change-names', key: [], names: 'FIRST 1 ("c")', chosen: ['c'] });
    const early = nextSyncStep({ ...base, currentNames: 'FIRST 1 ("c")', keyIsOurs: true, streaming: [row('b', 10), row('c', 90, 'sync')], changeLsn: 100 });
    assert.deepEqual(early, { kind: 'none' }, 'not yet flushed past the change point');
    const ready = nextSyncStep({ ...base, currentNames: 'FIRST 1 ("c")', keyIsOurs: true, streaming: [row('b', 10), row('c', 100, 'sync')], changeLsn: 100 });
    assert.deepEqual(ready, { kind: 'publish', key: ['c'] });
  });

  it('keeps a published healthy standby, and takes a lost one out of the key before the names change', () => {
    const stable = nextSyncStep({ ...base, published: ['b'], keyIsOurs: true, currentNames: 'FIRST 1 ("b")', streaming: [row('b', 10, 'sync'), row('c', 50)] });
    assert.deepEqual(stable, { kind: 'none' });
    const lost = nextSyncStep({ ...base, published: ['b'], keyIsOurs: true, currentNames: 'FIRST 1 ("b")', streaming: [row('c', 50)] });
    assert.deepEqual(lost, { kind: 'change-names', key: [], names: 'FIRST 1 ("c")', chosen: ['c'] });
  });

  it('goes standalone when nothing streams, or waits on a placeholder in strict mode', () => {
    assert.deepEqual(nextSyncStep({ ...base, published: ['b'], keyIsOurs: true, currentNames: 'FIRST 1 ("b")' }), {
      kind: 'change-names',
      key: [],
      names: '',
      chosen: [],
    });
    const strict = nextSyncStep({ ...base, strict: true, published: ['b'], keyIsOurs: true, currentNames: 'FIRST 1 ("b")' });
    assert.equal(strict.kind, 'change-names');
    assert.match((strict as { names: string }).names, /placeholder/);
    assert.deepEqual(nextSyncStep({ ...base, keyIsOurs: false }), { kind: 'publish', key: [] }, 'a new leader takes the key over');
  });

  it('supports several synchronous standbys (FIRST n)', () => {
    const step = nextSyncStep({ ...base, nodeCount: 2, streaming: [row('b', 10), row('c', 20), row('d', 5)] });
    assert.deepEqual(step, { kind: 'change-names', key: [], names: 'FIRST 2 ("c","b")', chosen: ['c', 'b'] });
    const partial = nextSyncStep({
      ...base,
      nodeCount: 2,
      keyIsOurs: true,
      currentNames: 'FIRST 2 ("c","b")',
      streaming: [row('b', 100, 'sync'), row('c', 20, 'sync')],
      changeLsn: 50,
    });
    assert.deepEqual(partial, { kind: 'none' }, 'c has not flushed past the change point yet');
  });
});
