import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { candidateStreamWaitMs, handOverGate, streamingStandbys } from '../../../sidecar/ha-node/ha/duties/handover-gate.js';
import { waitsForCandidate } from '../../../sidecar/ha-node/ha/duties/replica-duties.js';
import type { ReplicationRow } from '../../../sidecar/ha-node/postgres/status.js';

function row(name: string, state: string, replyAgeMs: number | null = 100): ReplicationRow {
  return { usename: 'replicator', application_name: name, client_addr: '127.0.0.1', state, sync_state: 'async', sync_priority: 0, reply_age_ms: replyAgeMs };
}

function member(name: string, nofailover = false): MemberRecord {
  return {
    name,
    conn_url: '',
    api_url: '',
    host: '',
    port: 5432,
    role: 'replica',
    state: 'running',
    tags: nofailover ? { nofailover: true } : {},
    version: '',
    heartbeat: 0,
  } as MemberRecord;
}

describe('the leader hands over only to a streaming candidate', () => {
  it('counts standbys that stream and replied within the bound, not those catching up or silent', () => {
    const names = streamingStandbys([row('a', 'streaming'), row('b', 'catchup'), row('c', 'streaming', 60_000), row('d', 'streaming', null)], 10_000);
    assert.deepEqual([...names].sort(), ['a', 'd']);
  });

  it('goes when the named candidate streams, waits while it does not, refuses once the wait is over', () => {
    const members = [member('a'), member('b')];
    assert.deepEqual(handOverGate('a', new Set(['a']), members, 0, 5000), { kind: 'go' });
    const waiting = handOverGate('a', new Set(['b']), members, 4999, 5000);
    assert.equal(waiting.kind, 'wait');
    assert.match(waiting.kind === 'wait' ? waiting.reason : '', /candidate a does not stream/);
    const refused = handOverGate('a', new Set(), members, 5000, 5000);
    assert.equal(refused.kind, 'refuse');
    assert.match(refused.kind === 'refuse' ? refused.reason : '', /candidate a does not stream from the primary \(waited 5 s\)/);
  });

  it('without a named candidate, needs one streaming member that may take over', () => {
    const members = [member('a', true), member('b')];
    assert.equal(handOverGate(undefined, new Set(['a']), members, 0, 5000).kind, 'wait');
    assert.equal(handOverGate(undefined, new Set(['a', 'b']), members, 0, 5000).kind, 'go');
  });

  it('waits within the time the API gives a switchover to finish', () => {
    assert.equal(candidateStreamWaitMs(2), 5000);
    assert.equal(candidateStreamWaitMs(20), 10_000);
    assert.equal(candidateStreamWaitMs(300), 12_000);
  });
});

describe('a former primary after its switchover', () => {
  it('stays stopped while the failover is pending and nobody leads, for at most ttl', () => {
    assert.equal(waitsForCandidate(false, true, 1000, 5000, 10), true);
    assert.equal(waitsForCandidate(false, true, 1000, 11_000, 10), false);
  });

  it('starts at once when the candidate gave the switchover up (failover key gone, no leader) or a leader exists', () => {
    assert.equal(waitsForCandidate(false, false, 1000, 2000, 10), false);
    assert.equal(waitsForCandidate(true, true, 1000, 2000, 10), false);
    assert.equal(waitsForCandidate(false, true, undefined, 2000, 10), false);
  });
});
