import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterView, HistoryEntry, MemberRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { bootstrapDeferral, bootstrapGraceMs } from '../../../sidecar/ha-node/ha/duties/bootstrap-order.js';
import { historyBehind, historyEntries } from '../../../sidecar/ha-node/ha/records/leader-history.js';
import { failsafeList, restartBudget, slotMembers } from '../../../sidecar/ha-node/ha/duties/leader-duties.js';
import { connUrl, leaderAddress, leaderTimeline } from '../../../sidecar/ha-node/ha/loop-context.js';
import { handOverDue } from '../../../sidecar/ha-node/ha/duties/manual-failover.js';
import { memberRecord } from '../../../sidecar/ha-node/ha/records/member-record.js';
import { clusterDocument } from '../../../sidecar/ha-node/api/cluster-document.js';
import { failsafeHoldsOff } from '../../../sidecar/ha-node/ha/duties/race.js';
import { followsElsewhere, notStreamingOverdue } from '../../../sidecar/ha-node/ha/duties/replica-duties.js';
import type { ServerStatus } from '../../../sidecar/ha-node/postgres/status.js';
import { nextStreamingLook, streamingLookMs, streamingWindowMs, watchForStreaming } from '../../../sidecar/ha-node/ha/watches/streaming-watch.js';
import { replicaMayHaveDiverged } from '../../../sidecar/ha-node/ha/duties/transitions.js';

/** The small decisions of the HA loop's duty modules, without processes. */

function member(name: string, extra: Partial<MemberRecord> = {}): MemberRecord {
  return {
    name,
    conn_url: `postgres://${name}:5432/postgres`,
    api_url: `http://${name}:8008/patroni`,
    host: `${name}.pods`,
    port: 5432,
    role: 'replica',
    state: 'streaming',
    tags: {},
    version: '0.1.0',
    heartbeat: 1_000_000,
    ...extra,
  };
}

function cluster(extra: Partial<ClusterView> = {}): ClusterView {
  return {
    history: [],
    members: [member('a', { role: 'primary', state: 'running', timeline: 3 }), member('b')],
    leader: { holder: 'a', ttl: 30, transitions: 0 },
    ...extra,
  };
}

const replica: ServerStatus = {
  inRecovery: true,
  postmasterStartTime: '2026-11-22 10:00:00.000000+00:00',
  serverVersion: 150018,
  timeline: 2,
  systemIdentifier: '7711',
  location: undefined,
  receivedLocation: 9000,
  replayedLocation: 8000,
  replicationState: 'streaming',
  replayedTimestamp: null,
  paused: false,
  replication: [],
  synchronousStandbyNames: '',
};

describe('leader history upkeep', () => {
  it('reads the history file only when the DCS lags the timeline', () => {
    assert.equal(historyBehind([], 1), false);
    assert.equal(historyBehind([], 2), true);
    assert.equal(historyBehind([[1, 100, 'x', 't']], 2), false);
    assert.equal(historyBehind([[1, 100, 'x', 't']], 3), true);
  });

  it('keeps known entries, stamps new ones and keeps the last 100', () => {
    const known: HistoryEntry[] = [[1, 100, 'old', '2026-01-01T00:00:00.000Z', 'x']];
    const now = new Date('2026-11-22T12:00:00.000Z');
    const entries = historyEntries(
      known,
      [
        [1, 999, 'ignored'],
        [2, 200, 'promoted'],
      ],
      'b',
      now,
    );
    assert.deepEqual(entries, [known[0], [2, 200, 'promoted', '2026-11-22T12:00:00.000Z', 'b']]);
    const many = Array.from({ length: 130 }, (_, i): [number, number, string] => [i + 1, i * 10, 'r']);
    const kept = historyEntries([], many, 'b', now);
    assert.equal(kept.length, 100);
    assert.equal(kept[0][0], 31);
  });
});

describe('leader duties', () => {
  it('keeps slots only for members heard from within member_slots_ttl (30 min)', () => {
    const now = 10_000_000;
    const members = [
      member('a', { heartbeat: now - 1000 }),
      member('b', { heartbeat: now - 30 * 60 * 1000 }),
      member('c', { heartbeat: now - 29 * 60 * 1000 }),
    ];
    assert.deepEqual(slotMembers(members, now), ['a', 'c']);
  });

  it('publishes the failsafe list only in failsafe mode', () => {
    const members = [member('a'), member('b')];
    assert.equal(failsafeList(members, false), null);
    assert.deepEqual(failsafeList(members, true), { a: 'http://a:8008/patroni', b: 'http://b:8008/patroni' });
  });

  it('bounds a crashed primary restart by ttl/3 and the rest of primary_start_timeout, at least 1 s', () => {
    assert.equal(restartBudget(30, 300, 0), 10);
    assert.equal(restartBudget(30, 300, 295.5), 5);
    assert.equal(restartBudget(30, 300, 300), 1);
    assert.equal(restartBudget(2, 300, 0), 1);
  });
});

describe('loop context lookups', () => {
  it('finds the leader address and the timeline of a running leader only', () => {
    assert.deepEqual(leaderAddress(cluster()), { name: 'a', host: 'a.pods', port: 5432 });
    assert.equal(leaderAddress(cluster({ leader: undefined })), undefined);
    assert.equal(leaderAddress(cluster({ leader: { holder: 'gone', ttl: 30, transitions: 0 } })), undefined);
    assert.equal(leaderTimeline(cluster()), 3);
    assert.equal(leaderTimeline(cluster({ members: [member('a', { role: 'primary', state: 'stopped', timeline: 3 })] })), 0);
  });

  it('builds the connection URL from the listen address', () => {
    assert.equal(connUrl({ settings: { connectHost: '10.0.0.7', port: 5433 } }), 'postgres://10.0.0.7:5433/postgres');
  });
});

describe('manual failover on the leader', () => {
  const now = new Date('2026-11-22T12:00:00.000Z');
  it('hands over at once only for a due key naming a known other member', () => {
    assert.equal(handOverDue(cluster({ failover: { member: 'b' } }), 'a', 10, false, now), true);
    assert.equal(handOverDue(cluster({ failover: { member: 'b' } }), 'b', 10, false, now), false, 'not the lock holder');
    assert.equal(handOverDue(cluster({ failover: { member: 'a' } }), 'a', 10, false, now), false, 'names ourselves');
    assert.equal(handOverDue(cluster({ failover: { member: 'z' } }), 'a', 10, false, now), false, 'unknown member');
    assert.equal(handOverDue(cluster({ failover: { member: 'b', leader: 'c' } }), 'a', 10, false, now), false, 'for another leader');
    assert.equal(handOverDue(cluster({ failover: {} }), 'a', 10, false, now), false, 'no member named');
  });

  it('waits for scheduled_at and while paused', () => {
    const later = { member: 'b', scheduled_at: '2026-11-22T12:05:00.000Z' };
    assert.equal(handOverDue(cluster({ failover: later }), 'a', 10, false, now), false);
    assert.equal(handOverDue(cluster({ failover: later }), 'a', 10, false, new Date('2026-11-22T12:05:01.000Z')), true);
    assert.equal(handOverDue(cluster({ failover: { member: 'b' } }), 'a', 10, true, now), true, 'an unscheduled switchover runs also when paused');
  });
});

describe('race and replica rules', () => {
  it('a fresh failsafe confirmation from another member keeps a replica out of the race', () => {
    const contact = { name: 'a', at: 1000 };
    assert.equal(failsafeHoldsOff(contact, 'b', false, 30, 20_000), true);
    assert.equal(failsafeHoldsOff(contact, 'b', false, 30, 31_000), false, 'older than ttl');
    assert.equal(failsafeHoldsOff(contact, 'b', true, 30, 2000), false, 'a primary races');
    assert.equal(failsafeHoldsOff({ name: 'b', at: 1000 }, 'b', false, 30, 2000), false, 'our own confirmation');
    assert.equal(failsafeHoldsOff(contact, 'b', false, 30, 20_000, 'a'), false, 'its sender released the lock since (a switchover)');
    assert.equal(failsafeHoldsOff(contact, 'b', false, 30, 20_000, 'c'), true, 'another member released it');
  });

  it('re-points only when following another address', () => {
    const leader = { name: 'a', host: 'a.pods', port: 5432 };
    assert.equal(followsElsewhere(undefined, leader), true);
    assert.equal(followsElsewhere(null, leader), true);
    assert.equal(followsElsewhere({ name: 'old', host: 'a.pods', port: 5432 }, leader), false);
    assert.equal(followsElsewhere({ name: 'a', host: 'a.pods', port: 5433 }, leader), true);
  });

  it('asks about a rewind after 3 loop_waits (at least 5 s) without streaming', () => {
    assert.equal(notStreamingOverdue(0, 5000, 1), false);
    assert.equal(notStreamingOverdue(0, 5001, 1), true);
    assert.equal(notStreamingOverdue(0, 29_000, 10), false);
    assert.equal(notStreamingOverdue(0, 30_001, 10), true);
  });
});

describe('member record', () => {
  const options = { name: 'b', apiUrl: 'http://b:8008/patroni', tags: { nofailover: true }, version: '0.1.0' };
  const pg = { settings: { connectHost: 'b.pods', port: 5432 }, state: 'running' as const };
  it('describes a running replica from its status', () => {
    const record = memberRecord(options, pg, { status: replica, offlineRole: 'replica', pendingRestart: false }, 42);
    assert.deepEqual(record, {
      name: 'b',
      conn_url: 'postgres://b.pods:5432/postgres',
      api_url: 'http://b:8008/patroni',
      host: 'b.pods',
      port: 5432,
      role: 'replica',
      state: 'streaming',
      timeline: 2,
      xlog_location: 9000,
      receive_lsn: 9000,
      replay_lsn: 8000,
      replication_state: 'streaming',
      tags: { nofailover: true },
      version: '0.1.0',
      heartbeat: 42,
      pending_restart: undefined,
      system_identifier: '7711',
      standby_source: undefined,
      standby_demotion: undefined,
      config_errors: undefined,
    });
  });

  it('a standby leader publishes where its source stands; /cluster turns it into lag and the source timeline', () => {
    const leading = { ...replica, senderEndLocation: 12_000 };
    const demotion = { systemIdentifier: '7711', timeline: 1, checkpointLocation: 7000, at: '2026-11-22T10:00:00Z' };
    const record = memberRecord(options, pg, { status: leading, offlineRole: 'replica', pendingRestart: false, demotion }, 42, true);
    assert.deepEqual(record.standby_source, { timeline: 2, lsn: 12_000 });
    assert.deepEqual(record.standby_demotion, { system_identifier: '7711', timeline: 1, checkpoint_location: 7000, at: '2026-11-22T10:00:00Z' });
    assert.equal(
      memberRecord(options, pg, { status: leading, offlineRole: 'replica', pendingRestart: false }, 42).standby_source,
      undefined,
      'a cascading replica does not',
    );
    const view = { leader: { holder: 'b' }, members: [record], config: { standby_cluster: { host: '10.0.0.1' } } } as unknown as ClusterView;
    const [item] = clusterDocument(view, 'demo').members as Record<string, unknown>[];
    assert.equal(item?.role, 'standby_leader');
    assert.deepEqual([item?.source_timeline, item?.source_lag, item?.system_identifier], [2, 4000, '7711'], "replayed 8000 of the source's 12000");
    assert.equal((item?.standby_demotion as { checkpoint_lsn?: string }).checkpoint_lsn, '0/1B58');
  });

  it('shows the offline role and database state when PostgreSQL does not answer', () => {
    const record = memberRecord(options, { ...pg, state: 'stopped' }, { status: undefined, offlineRole: 'demoted', pendingRestart: true }, 7);
    assert.equal(record.role, 'demoted');
    assert.equal(record.state, 'stopped');
    assert.equal(record.xlog_location, undefined);
    assert.equal(record.pending_restart, true);
  });
});

it("a stopped replica behind the leader's timeline goes through pg_rewind before it follows", () => {
  const stopped = (timeline: number, state = 'shut down in recovery') => ({ state, timeline, systemIdentifier: '1' });
  assert.equal(replicaMayHaveDiverged(stopped(2), 3), true, 'checkpoint on timeline 2, leader on 3: may hold WAL the leader never had');
  assert.equal(replicaMayHaveDiverged(stopped(3), 3), false, 'same timeline: follows as it is');
  assert.equal(replicaMayHaveDiverged(stopped(2), 0), false, 'leader timeline unknown (leader not running): no rewind');
  assert.equal(replicaMayHaveDiverged(stopped(2, 'in archive recovery'), 3), false, 'not cleanly shut down: pg_rewind would refuse');
  assert.equal(replicaMayHaveDiverged(undefined, 3), false, 'no data directory');
});

describe('bootstrap order and the streaming watch', () => {
  it('gives ordinal 0 a head start on the initialize key, then lets everyone race', () => {
    assert.equal(bootstrapDeferral('demo-0', 'demo', 0), undefined);
    assert.match(bootstrapDeferral('demo-1', 'demo', 2500) ?? '', /demo-0 bootstraps a new cluster first \(8 s left\)/);
    assert.equal(bootstrapDeferral('demo-1', 'demo', bootstrapGraceMs), undefined, 'a missing ordinal 0 delays bootstrap by the grace only');
    assert.equal(bootstrapDeferral('other-0', 'demo', 0) !== undefined, true, "another scope's ordinal 0 is not ours");
  });

  it('looks again every second after a replica start until it streams, within a window', () => {
    const replica = (replicationState?: string): ServerStatus => ({ inRecovery: true, replicationState }) as ServerStatus;
    const state = { watchStreamingUntil: undefined as number | undefined };
    assert.equal(nextStreamingLook(state, replica(), 0), undefined, 'nothing started: normal pace');
    watchForStreaming(state, 1000);
    assert.equal(nextStreamingLook(state, undefined, 1500), streamingLookMs, 'still starting');
    assert.equal(nextStreamingLook(state, replica('in archive recovery'), 2500), streamingLookMs);
    assert.equal(nextStreamingLook(state, replica('streaming'), 3500), undefined);
    assert.equal(state.watchStreamingUntil, undefined, 'streaming ends the watch');
    watchForStreaming(state, 10_000);
    assert.equal(nextStreamingLook(state, replica(), 10_000 + streamingWindowMs), undefined, 'a replica that cannot stream falls back to loop_wait');
    watchForStreaming(state, 0);
    assert.equal(nextStreamingLook(state, { inRecovery: false } as ServerStatus, 100), undefined, 'promoted: nothing to wait for');
  });
});
