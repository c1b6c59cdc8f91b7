import type { DatabaseCluster } from '../api/types.js';
import type { HaClusterMember } from '../hanode-client.js';

/** Why a cluster in a synchronous mode is not Healthy although every instance is ready. */
export interface SyncStandbyGap {
  reason: 'NoSyncStandby';
  message: string;
}

/**
 * In a synchronous mode the cluster is only as safe as its named synchronous standby: before the
 * primary names one (bootstrap, after a failover) or after it dropped a silent one, commits are
 * either not replicated synchronously (on, quorum) or wait (strict), and only the last primary may
 * be promoted. Judged from ha-node's member roles (the sync key); undefined when nothing is missing
 * or the roles are unknown (the primary's ha-node did not answer).
 */
export function syncStandbyGap(cluster: DatabaseCluster, haMembers: HaClusterMember[] | undefined): SyncStandbyGap | undefined {
  const mode = cluster.spec.ha.synchronousMode;
  if (mode === 'off' || cluster.spec.replica?.enabled || haMembers === undefined) return undefined;
  const role = mode === 'quorum' ? 'quorum_standby' : 'sync_standby';
  if (haMembers.some((m) => m.role === role)) return undefined;
  const effect =
    mode === 'strict'
      ? 'writes wait until a standby streams again (synchronousMode strict)'
      : 'commits are acknowledged without a synchronous copy, and only the primary may be promoted';
  return { reason: 'NoSyncStandby', message: `no ${mode === 'quorum' ? 'quorum' : 'synchronous'} standby is named: ${effect}` };
}
