import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leaderChangeWakes } from '../../../../sidecar/ha-node/dcs/leader-observer.js';
import { MEMBER_REFRESH_MS, MEMBER_SLOTS_TTL_MS, memberWriteNeeded, positionInLock } from '../../../../sidecar/ha-node/dcs/member-refresh.js';
import type { LeaderRecord, MemberRecord } from '../../../../sidecar/ha-node/dcs/types.js';

/** The pure rules behind ha-node's steady-state API load: when to write a member record, when a leader change wakes the loop. */

const member = (extra: Partial<MemberRecord> = {}): MemberRecord => ({
  name: 'b',
  conn_url: 'postgres://127.0.0.3:5432/postgres',
  api_url: 'http://127.0.0.3:8008/ha',
  host: '127.0.0.3',
  port: 5432,
  role: 'replica',
  state: 'streaming',
  timeline: 1,
  xlog_location: 100,
  receive_lsn: 100,
  replay_lsn: 100,
  replication_state: 'streaming',
  tags: {},
  version: '0.1.0',
  heartbeat: 1_000_000,
  ...extra,
});

describe('member record writes', () => {
  it('writes a first record, a changed one, and an unchanged one only when its heartbeat is due', () => {
    const stored = JSON.parse(JSON.stringify(member())) as MemberRecord;
    assert.equal(memberWriteNeeded(undefined, member()), true);
    assert.equal(memberWriteNeeded(stored, member({ heartbeat: 1_000_000 + MEMBER_REFRESH_MS - 1 })), false);
    assert.equal(memberWriteNeeded(stored, member({ heartbeat: 1_000_000 + MEMBER_REFRESH_MS })), true);
    assert.equal(memberWriteNeeded(stored, member({ heartbeat: 1_000_001, replay_lsn: 200 })), true);
    assert.equal(memberWriteNeeded(stored, member({ heartbeat: 1_000_001, pending_restart: true })), true);
    assert.equal(memberWriteNeeded(stored, member({ heartbeat: 1_000_001, tags: { nofailover: true } })), true);
    // undefined fields are absent from the stored JSON: not a change
    assert.equal(memberWriteNeeded(stored, member({ heartbeat: 1_000_001, pending_restart: undefined })), false);
    assert.ok(MEMBER_REFRESH_MS * 3 <= MEMBER_SLOTS_TTL_MS, 'a live member never looks silent to the slot upkeep');
  });

  it('leaves a moved WAL position alone only in the record of a lock holder whose renewal carries it', () => {
    const primary = member({ role: 'primary', receive_lsn: undefined, replay_lsn: undefined, replication_state: undefined, state: 'running' });
    const stored = JSON.parse(JSON.stringify(primary)) as MemberRecord;
    const moved = { ...primary, heartbeat: 1_000_001, xlog_location: 5_000 };
    assert.equal(positionInLock(moved, true), true);
    assert.equal(memberWriteNeeded(stored, moved, positionInLock(moved, true)), false, 'the renewal published the position as optime');
    assert.equal(memberWriteNeeded(stored, moved, positionInLock(moved, false)), true, 'no lock: the record is the only place of the position');
    assert.equal(memberWriteNeeded(stored, { ...moved, state: 'stopping' }, true), true, 'anything else that changed is written');
    // A replica (even one holding the lock while it promotes) renews without an optime.
    const replica = member({ heartbeat: 1_000_001, xlog_location: 5_000 });
    assert.equal(positionInLock(replica, true), false);
    assert.equal(memberWriteNeeded(JSON.parse(JSON.stringify(member())) as MemberRecord, replica, positionInLock(replica, true)), true);
    assert.equal(positionInLock(member({ role: 'standby_leader' }), true), true, 'a standby leader renews with its position too');
  });
});

describe('leader changes that wake the loop', () => {
  const leader = (extra: Partial<LeaderRecord> = {}): LeaderRecord => ({
    holder: 'a',
    ttl: 30,
    acquireTime: 't0',
    renewTime: 't1',
    transitions: 2,
    optime: 10,
    resourceVersion: '5',
    ...extra,
  });

  it('ignores a renewal by the same live holder and wakes for anything else', () => {
    assert.equal(
      leaderChangeWakes(leader(), leader({ renewTime: 't2', optime: 20, resourceVersion: '6', slots: { b: 1 }, failsafe: { b: 'x' } }), false),
      false,
    );
    assert.equal(leaderChangeWakes(leader(), leader({ renewTime: 't2' }), true), true, 'the holder is back after expiring');
    assert.equal(leaderChangeWakes(leader(), leader({ holder: 'b', transitions: 3 }), false), true);
    assert.equal(leaderChangeWakes(leader(), leader({ holder: '', releasedCheckpoint: 99 }), false), true);
    assert.equal(leaderChangeWakes(leader(), leader({ ttl: 10 }), false), true);
    assert.equal(leaderChangeWakes(leader(), leader({ acquireTime: 't9' }), false), true);
    assert.equal(leaderChangeWakes(undefined, leader(), true), true);
    assert.equal(leaderChangeWakes(leader(), undefined, false), true);
  });
});
