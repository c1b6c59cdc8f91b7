import type { ClusterView, Dcs } from '../dcs/types.js';
import type { ControlData } from '../postgres/instance.js';

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
export interface ReleaseSighting {
  version: string;
  checkpoint: number;
  at: number;
}

/**
 * The WAL position a racer must have reached after a clean release: the released shutdown
 * checkpoint, for ttl seconds from when this member first saw the release. Until then a member
 * missing that WAL does not promote (it would lose commits the old primary acknowledged); the old
 * primary itself comes back as a replica holding all of it, so a winner exists. After ttl the
 * normal rules (maximum_lag_on_failover) apply, so an old primary that never returns cannot keep
 * the cluster leaderless. Returns the updated sighting to keep.
 */
export function releasedWalFloor(
  cluster: ClusterView,
  seen: ReleaseSighting | undefined,
  ttlSeconds: number,
  now: number,
): { floor?: number; sinceMs: number; seen?: ReleaseSighting } {
  const record = cluster.leaderRecord;
  const checkpoint = record?.releasedCheckpoint;
  if (!record || checkpoint === undefined) return { sinceMs: 0, seen: undefined };
  const version = `${record.resourceVersion ?? ''}@${checkpoint}`;
  const sighting = seen?.version === version ? seen : { version, checkpoint, at: now };
  const sinceMs = now - sighting.at;
  return { floor: sinceMs <= ttlSeconds * 1000 ? checkpoint : undefined, sinceMs, seen: sighting };
}
