import type { ClusterView, Dcs } from '../../dcs/types.js';
import type { ControlData } from '../../postgres/instance.js';
import type { PeerReport } from './election.js';
import type { ReleaseSighting } from '../state.js';

/**
 * The position a leader publishes when it releases the lock after stopping PostgreSQL: the start
 * of the shutdown checkpoint when pg_control shows a clean stop (every commit lies before it), or
 * else the last position read while the server ran. Reading it before the stop, as we once did,
 * left out the WAL written during the shutdown, and a candidate missing it could promote (issue 7).
 */
export function releasePosition(control: ControlData | undefined, beforeStop: number | undefined): { optime?: number; shutdownCheckpoint: boolean } {
  if (control?.state === 'shut down' && control.checkpointLocation !== undefined) {
    return { optime: control.checkpointLocation, shutdownCheckpoint: true };
  }
  return { optime: beforeStop || undefined, shutdownCheckpoint: false };
}

/** Reads pg_control after the stop and releases the lock with releasePosition's answer. */
export async function releaseAfterStop(
  pg: { controlData(): Promise<ControlData | undefined> },
  dcs: Pick<Dcs, 'deleteLeader'>,
  beforeStop: number | undefined,
): Promise<{ optime?: number; shutdownCheckpoint: boolean }> {
  const position = releasePosition(await pg.controlData().catch(() => undefined), beforeStop);
  await dcs.deleteLeader(position.optime, { shutdownCheckpoint: position.shutdownCheckpoint });
  return position;
}

/** When this member first saw a given clean release (keyed by the lease version that carries it). */
/** Whether the member that made a clean release still runs: alive, gone, or not known (not asked). */
export type ReleaserHealth = 'alive' | 'gone' | 'unknown';

/** Judges the releaser from its answer on the REST API: reachable and not failed is alive. */
export function releaserHealth(report: PeerReport | undefined): ReleaserHealth {
  if (!report) return 'unknown';
  if (!report.reachable) return 'gone';
  return /failed|crashed/.test(report.state ?? '') ? 'gone' : 'alive';
}

/**
 * The WAL position a racer must have reached after a clean release: the released shutdown
 * checkpoint. Until then a member missing that WAL does not promote (it would lose commits the old
 * primary acknowledged); the old primary itself comes back as a replica holding all of it, so a
 * winner exists. The floor holds for ttl seconds from when this member first saw the release, and
 * beyond that while the old primary still answers and has not failed (a slow restart on a loaded
 * node must not let a member without its WAL promote), up to primary_start_timeout. After that, or
 * once the old primary is gone, the normal rules (maximum_lag_on_failover) apply, so an old primary
 * that never returns cannot keep the cluster leaderless. Returns the updated sighting to keep.
 */
export function releasedWalFloor(
  cluster: ClusterView,
  seen: ReleaseSighting | undefined,
  limits: { ttlSeconds: number; startTimeoutSeconds: number },
  now: number,
  releaser: ReleaserHealth = 'unknown',
): { floor?: number; sinceMs: number; seen?: ReleaseSighting } {
  const record = cluster.leaderRecord;
  const checkpoint = record?.releasedCheckpoint;
  if (!record || checkpoint === undefined) return { sinceMs: 0, seen: undefined };
  const version = `${record.resourceVersion ?? ''}@${checkpoint}`;
  const sighting = seen?.version === version ? seen : { version, checkpoint, at: now };
  const sinceMs = now - sighting.at;
  const withinTtl = sinceMs <= limits.ttlSeconds * 1000;
  const waitingForReleaser = releaser === 'alive' && sinceMs <= Math.max(limits.ttlSeconds, limits.startTimeoutSeconds) * 1000;
  return { floor: withinTtl || waitingForReleaser ? checkpoint : undefined, sinceMs, seen: sighting };
}
