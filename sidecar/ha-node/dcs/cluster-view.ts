import type { V1Lease } from '@kubernetes/client-node';
import { Label, configFromLease, failoverFromLease, leaseName, memberFromLease, syncFromLease } from './lease-codec.js';
import type { ClusterView, LeaderRecord, MemberRecord } from './types.js';

/**
 * The cluster as one set of cached Leases shows it: the same assembly for a fresh LIST and for
 * the watch cache the REST API reads from. Pure; the leader fields come from the caller's
 * LeaderObserver, which judges expiry by local observation.
 */
export function clusterViewOf(leases: Iterable<V1Lease>, scope: string, leader: { current?: LeaderRecord; raw?: LeaderRecord }): ClusterView {
  const byName = new Map<string, V1Lease>();
  const members: MemberRecord[] = [];
  for (const lease of leases) {
    if (lease.metadata?.labels?.[Label.dcsKey] === 'member') {
      const member = memberFromLease(lease);
      if (member) members.push(member);
    } else if (lease.metadata?.name) {
      byName.set(lease.metadata.name, lease);
    }
  }
  members.sort((a, b) => a.name.localeCompare(b.name));
  const configLease = byName.get(leaseName(scope, 'config'));
  const { config, initialize, history } = configFromLease(configLease);
  return {
    leader: leader.current,
    leaderRecord: leader.raw,
    config,
    configVersion: configLease?.metadata?.resourceVersion ?? '',
    initialize,
    history,
    failover: failoverFromLease(byName.get(leaseName(scope, 'failover'))),
    sync: syncFromLease(byName.get(leaseName(scope, 'sync'))),
    members,
  };
}
