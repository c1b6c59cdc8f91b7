import type { DatabaseCluster } from '../../api/crd/types.js';
import type { HaClusterMember } from '../hanode-client.js';

/** Condition type, in synchronous modes: whether the primary names a synchronous standby. */
export const SyncStandbyCondition = 'SynchronousStandby';

/** The synchronous standbys ha-node names, and why the cluster is not safe when it names none. */
export interface SyncStandbyState {
  named: string[];
  gap?: { reason: 'NoSyncStandby'; message: string };
}

/**
 * In a synchronous mode the cluster is only as safe as its named synchronous standby: before the
 * primary names one (bootstrap, after a failover) or after it dropped a silent one, commits are
 * either not replicated synchronously (on, quorum) or wait (strict), and only the last primary may
 * be promoted. Judged from ha-node's member roles (the sync key); undefined in asynchronous mode,
 * for a standby cluster, or when the roles are unknown (the primary's ha-node did not answer).
 */
export function syncStandbyState(cluster: DatabaseCluster, haMembers: HaClusterMember[] | undefined): SyncStandbyState | undefined {
  const mode = cluster.spec.ha.synchronousMode;
  if (mode === 'off' || cluster.spec.replica?.enabled || haMembers === undefined) return undefined;
  const role = mode === 'quorum' ? 'quorum_standby' : 'sync_standby';
  const named = haMembers.filter((m) => m.role === role).map((m) => m.name);
  if (named.length > 0) return { named };
  const effect =
    mode === 'strict'
      ? 'writes wait until a standby streams again (synchronousMode strict)'
      : 'commits are acknowledged without a synchronous copy, and only the primary may be promoted';
  return { named, gap: { reason: 'NoSyncStandby', message: `no ${mode === 'quorum' ? 'quorum' : 'synchronous'} standby is named: ${effect}` } };
}
