import type { V1Pod } from '@kubernetes/client-node';
import type { RoleStep } from '../../api/crd/replica-types.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { HaClusterMember, HaDemotion, HaNodeState } from '../hanode-client.js';
import type { RawCluster } from '../kube-api.js';
import { names, podSelector, selectorString } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';
import { useApiTls } from './api-tls.js';
import { leaseHolder, primaryOf } from './primary.js';
import { followedCluster } from './replica-source.js';

/**
 * Where a DatabaseCluster stands between primary and standby, and what its next step is. Turning
 * a running primary into a standby (replica.enabled: true) demotes it in place; enabled: false
 * promotes a standby, at once or — the controlled swap, promotion AfterSourceDemotion — only once
 * its source cluster, set to follow it, has demoted and its shutdown checkpoint has been replayed
 * here. Both sides of a swap change in one apply, in either order: the primary waits for the
 * standby's enabled: false before it demotes, the standby waits for the demotion before it
 * promotes, so there is never a moment with two writable primaries nor a lost commit.
 */

export type Role = 'primary' | 'standby';

export interface RoleObservation {
  /** The source DatabaseCluster's spec follows this cluster (replica.enabled, source = this one). */
  sourceFollowsUs?: boolean;
  /** The source's leader, asked directly during a swap (its demotion record, its role). */
  sourceLeader?: HaNodeState;
  /** This cluster's leader, asked directly during a swap (how far it has replayed). */
  ownLeader?: HaNodeState;
}

export interface RolePlan {
  role: Role;
  step?: RoleStep;
  message?: string;
  /** standby_cluster stays in, or goes into, ha-node's dynamic configuration. */
  followSource: boolean;
  /** The source follows this cluster on purpose (a swap): not a cycle. */
  swapping: boolean;
}

/** Steps during which the cluster changes role (status shows them, passes come every second). */
export const transientSteps: readonly RoleStep[] = ['WaitingForPeer', 'Demoting', 'WaitingForSourceDemotion', 'CatchingUp', 'Promoting'];

/** The role ha-node reports for the lock holder; else the last recorded one (or, before any, what the spec started as). */
export function currentRole(cluster: DatabaseCluster, members: HaClusterMember[] | undefined): Role {
  if (members?.some((m) => m.role === 'leader')) return 'primary';
  if (members?.some((m) => m.role === 'standby_leader')) return 'standby';
  const recorded = cluster.status?.replica?.role;
  if (recorded) return recorded;
  return cluster.status?.currentPrimary ? 'primary' : 'standby';
}

/** Whether a demotion the source's leader reports belongs to this swap (not to an earlier one). */
function demotionIsCurrent(leader: HaNodeState | undefined, sourceTimeline: number | undefined): HaDemotion | undefined {
  const demotion = leader?.standby_demotion;
  if (!demotion || leader?.role === 'primary') return undefined;
  return demotion.timeline >= (sourceTimeline ?? 0) ? demotion : undefined;
}

/** The next step of the cluster, pure. */
export function planRole(cluster: DatabaseCluster, members: HaClusterMember[] | undefined, seen: RoleObservation): RolePlan {
  const replica = cluster.spec.replica;
  const role = currentRole(cluster, members);
  if (!replica) return { role, followSource: false, swapping: false };
  const source = `${replica.source.namespace ?? cluster.metadata.namespace}/${replica.source.cluster ?? replica.source.host}`;
  if (replica.enabled) {
    if (role === 'standby') return { role, step: 'Following', followSource: true, swapping: false };
    if (seen.sourceFollowsUs) {
      return {
        role,
        step: 'WaitingForPeer',
        message: `${source} is a standby of this cluster: waiting for its replica.enabled: false before demoting`,
        followSource: false,
        swapping: false,
      };
    }
    return { role, step: 'Demoting', message: `stopping the primary cleanly to follow ${source}`, followSource: true, swapping: false };
  }
  if (role === 'primary') {
    const wasStandby = cluster.status?.replica?.role === 'standby' || cluster.status?.replica?.step === 'Promoted';
    return { role, ...(wasStandby ? { step: 'Promoted' as const } : {}), followSource: false, swapping: false };
  }
  if (replica.promotion === 'Immediate')
    return { role, step: 'Promoting', message: 'promoting the standby leader onto a new timeline', followSource: false, swapping: false };
  if (!seen.sourceFollowsUs) {
    return {
      role,
      step: 'WaitingForSourceDemotion',
      message: `waiting for ${source} to be set to follow this cluster (replica.enabled: true)`,
      followSource: true,
      swapping: false,
    };
  }
  const demotion = demotionIsCurrent(seen.sourceLeader, cluster.status?.replica?.sourceTimeline);
  if (!demotion) return { role, step: 'WaitingForSourceDemotion', message: `waiting for ${source} to demote`, followSource: true, swapping: true };
  const replayed = seen.ownLeader?.xlog?.replayed_location;
  if (replayed === undefined || replayed <= demotion.checkpoint_location) {
    return {
      role,
      step: 'CatchingUp',
      message: `replaying up to the shutdown checkpoint ${demotion.checkpoint_lsn} of ${source}`,
      followSource: true,
      swapping: true,
    };
  }
  return {
    role,
    step: 'Promoting',
    message: `replayed past ${demotion.checkpoint_lsn}, the shutdown checkpoint of ${source}: promoting`,
    followSource: false,
    swapping: true,
  };
}

/** The leader's node document of a cluster (undefined when it has none or does not answer). */
async function leaderState(deps: ReconcileDeps, namespace: string, name: string, pods?: V1Pod[], primary?: string): Promise<HaNodeState | undefined> {
  const list = pods ?? (await deps.api.listPods(namespace, selectorString(podSelector(name))));
  // Another cluster's pods (a swap's other side): how to reach and verify them, before the call.
  if (!pods) await useApiTls(deps, name, namespace, list);
  const leader = primary ?? primaryOf(list, leaseHolder(await deps.api.readLeaderLease(namespace, names(name).leaderLease), new Date()));
  const host = list.find((pod) => pod.metadata?.name === leader)?.status?.podIP;
  if (!host) return undefined;
  return deps.haNode.nodeState(host).catch(() => undefined);
}

/**
 * What the plan needs from outside this cluster's own /cluster document. Only a promotion after
 * the source's demotion asks ha-node directly (both leaders, every second until it is done).
 */
export async function observeRole(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
  members: HaClusterMember[] | undefined,
): Promise<RoleObservation> {
  const replica = cluster.spec.replica;
  const sourceName = replica?.source.cluster;
  if (!replica || sourceName === undefined) return {};
  const sourceNamespace = replica.source.namespace ?? cluster.metadata.namespace;
  const role = currentRole(cluster, members);
  const swapCandidate = (replica.enabled && role === 'primary') || (!replica.enabled && role === 'standby' && replica.promotion === 'AfterSourceDemotion');
  if (!swapCandidate) return {};
  const raw: RawCluster | undefined = await deps.api.readCluster(sourceNamespace, sourceName);
  const followed = raw ? followedCluster(raw as Parameters<typeof followedCluster>[0]) : undefined;
  const sourceFollowsUs = followed?.namespace === cluster.metadata.namespace && followed.name === cluster.metadata.name;
  if (replica.enabled || !sourceFollowsUs) return { sourceFollowsUs };
  const [sourceLeader, ownLeader] = await Promise.all([
    leaderState(deps, sourceNamespace, sourceName),
    leaderState(deps, cluster.metadata.namespace, cluster.metadata.name, pods, primary),
  ]);
  return { sourceFollowsUs, ...(sourceLeader ? { sourceLeader } : {}), ...(ownLeader ? { ownLeader } : {}) };
}
