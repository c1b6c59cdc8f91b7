import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leaderFromLease } from '../../../sidecar/ha-node/dcs/lease-codec.js';
import type { ClusterView, LeaderRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { raceVerdict } from '../../../sidecar/ha-node/ha/election/election.js';
import { releasePosition, releasedWalFloor, releaserHealth } from '../../../sidecar/ha-node/ha/election/release.js';
import { defaultConfig } from '../../../sidecar/ha-node/ha/settings.js';

/** The rules of a clean release (issue 7): what the old primary publishes and what a racer needs. */
describe('clean release of the leader lock', () => {
  it('publishes the shutdown checkpoint after a clean stop, else the position read while running', () => {
    const control = { state: 'shut down', timeline: 2, systemIdentifier: '7', checkpointLocation: 5_000 };
    assert.deepEqual(releasePosition(control, 4_800), { optime: 5_000, shutdownCheckpoint: true });
    assert.deepEqual(
      releasePosition({ ...control, state: 'in production' }, 4_800),
      { optime: 4_800, shutdownCheckpoint: false },
      'a crashed stop has no shutdown checkpoint',
    );
    assert.deepEqual(releasePosition(undefined, 0), { optime: undefined, shutdownCheckpoint: false });
  });

  it('reads the released checkpoint only from a record nobody holds', () => {
    const lease = (holder: string | undefined) => ({
      metadata: { annotations: { optime: '10', 'released-checkpoint': '10' } },
      spec: { holderIdentity: holder },
    });
    assert.equal(leaderFromLease(lease(undefined))?.releasedCheckpoint, 10);
    assert.equal(leaderFromLease(lease('b'))?.releasedCheckpoint, undefined, 'a stale annotation under a new holder means nothing');
  });

  const released = (record: Partial<LeaderRecord>): ClusterView => ({
    leaderRecord: { holder: '', ttl: 10, transitions: 1, optime: 5_000, releasedCheckpoint: 5_000, resourceVersion: '7', ...record },
    history: [],
    members: [],
  });

  const limits = { ttlSeconds: 10, startTimeoutSeconds: 300 };

  it('holds racers to the checkpoint for ttl seconds from the first sighting of that release', () => {
    const first = releasedWalFloor(released({}), undefined, limits, 1_000);
    assert.equal(first.floor, 5_000);
    assert.equal(first.sinceMs, 0);
    const later = releasedWalFloor(released({}), first.seen, limits, 9_000);
    assert.deepEqual([later.floor, later.sinceMs], [5_000, 8_000]);
    assert.equal(releasedWalFloor(released({}), first.seen, limits, 11_001).floor, undefined, 'after ttl the normal rules apply');
    const another = releasedWalFloor(released({ resourceVersion: '9', releasedCheckpoint: 6_000 }), first.seen, limits, 11_001);
    assert.deepEqual([another.floor, another.sinceMs], [6_000, 0], 'a new release starts its own window');
    assert.deepEqual(
      releasedWalFloor(released({ releasedCheckpoint: undefined }), first.seen, limits, 2_000),
      { sinceMs: 0, seen: undefined },
      'an expired or crash release sets no floor',
    );
  });

  it('keeps the floor past ttl while the old primary still answers and has not failed, up to primary_start_timeout', () => {
    const first = releasedWalFloor(released({ releasedBy: 'a' }), undefined, limits, 0);
    assert.equal(
      releasedWalFloor(released({ releasedBy: 'a' }), first.seen, limits, 60_000, 'alive').floor,
      5_000,
      'a slow restart of the old primary keeps the floor',
    );
    assert.equal(releasedWalFloor(released({ releasedBy: 'a' }), first.seen, limits, 60_000, 'gone').floor, undefined, 'an old primary that is gone lifts it');
    assert.equal(releasedWalFloor(released({ releasedBy: 'a' }), first.seen, limits, 60_000, 'unknown').floor, undefined);
    assert.equal(releasedWalFloor(released({ releasedBy: 'a' }), first.seen, limits, 300_001, 'alive').floor, undefined, 'bounded by primary_start_timeout');
    assert.equal(
      releasedWalFloor(released({}), first.seen, { ttlSeconds: 10, startTimeoutSeconds: 0 }, 10_001, 'alive').floor,
      undefined,
      'never shorter than ttl, never longer than both',
    );
  });

  it('judges the old primary by its REST API answer', () => {
    assert.equal(releaserHealth(undefined), 'unknown');
    assert.equal(releaserHealth({ name: 'a', reachable: false }), 'gone');
    for (const state of ['stopped', 'starting', 'running', 'stopping']) assert.equal(releaserHealth({ name: 'a', reachable: true, state }), 'alive', state);
    for (const state of ['start failed', 'restart failed', 'crashed']) assert.equal(releaserHealth({ name: 'a', reachable: true, state }), 'gone', state);
  });

  it('reads who made the release only with the released checkpoint on a record nobody holds', () => {
    const annotations = { optime: '10', 'released-checkpoint': '10', 'released-by': 'a' };
    assert.equal(leaderFromLease({ metadata: { annotations }, spec: {} })?.releasedBy, 'a');
    assert.equal(leaderFromLease({ metadata: { annotations }, spec: { holderIdentity: 'b' } })?.releasedBy, undefined);
    assert.equal(leaderFromLease({ metadata: { annotations: { 'released-by': 'a' } }, spec: {} })?.releasedBy, undefined);
  });

  it('keeps even the named candidate from promoting without the released WAL', () => {
    const cluster = { ...released({}), failover: { member: 'b' } };
    const self = { name: 'b', walPosition: 4_999, timeline: 1, nofailover: false, isPrimary: false };
    const behind = raceVerdict(self, cluster, defaultConfig, [], 5_000);
    assert.equal(behind.ok, false);
    assert.equal(!behind.ok && behind.missingReleasedWal, true);
    assert.deepEqual(
      raceVerdict({ ...self, walPosition: 5_000 }, cluster, defaultConfig, [], 5_000),
      { ok: true },
      'WAL up to the checkpoint start holds every commit',
    );
    assert.deepEqual(raceVerdict(self, cluster, defaultConfig, [], undefined), { ok: true }, 'without a floor the named candidate wins as before');
    assert.deepEqual(raceVerdict({ ...self, isPrimary: true }, cluster, defaultConfig, [], 5_000), { ok: true }, 'a running primary has all its WAL');
  });
});
