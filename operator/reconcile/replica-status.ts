import type { ReplicaStatus } from '../api/replica-types.js';
import type { DatabaseCluster } from '../api/types.js';
import type { HaClusterMember } from '../hanode-client.js';

/**
 * status.replica of a standby cluster, pure: `standby` while spec.replica.enabled; `primary` once
 * ha-node reports a leader that is no standby leader after enabled went false (the promotion is
 * done, not merely asked for). `promoted` tells the caller to record the Event once.
 */
export function replicaStatusOf(
  cluster: DatabaseCluster,
  source: string | undefined,
  members: HaClusterMember[] | undefined,
  now: Date,
): { status?: ReplicaStatus; promoted: boolean } {
  const replica = cluster.spec.replica;
  const previous = cluster.status?.replica;
  if (!replica) return { promoted: false };
  const withSource = (status: ReplicaStatus): ReplicaStatus => (source ? { ...status, source } : status);
  if (replica.enabled) return { status: withSource({ role: 'standby' }), promoted: false };
  if (previous?.role === 'primary') return { status: previous, promoted: false };
  const promotedNow = members?.some((m) => m.role === 'leader') === true;
  if (!promotedNow) return { status: withSource(previous ?? { role: 'standby' }), promoted: false };
  return { status: withSource({ role: 'primary', promotedAt: now.toISOString().replace(/\.\d{3}Z$/, 'Z') }), promoted: previous?.role === 'standby' };
}
