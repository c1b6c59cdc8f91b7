import type { V1Pod } from '@kubernetes/client-node';
import type { ServerCapabilities } from '../capabilities.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { BuildContext } from '../builders/context.js';
import type { HaClusterMember } from '../hanode-client.js';
import { names, podSelector, selectorString } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';
import { leaseHolder, primaryOf } from './primary.js';
import { resolveReplicaSource, type ResolvedReplicaSource } from './replica-source.js';
import { systemIdentifierOf } from './replica-status.js';
import { observeRole, planRole, type RolePlan } from './replica-role.js';
import { useApiTls } from './api-tls.js';

/** What a pass reads before it changes anything; the appliers and status parts work from it. */
export interface Observed {
  pods: V1Pod[];
  /** The pod holding the leader lease, when one does and runs. */
  primary: string | undefined;
  /** The pass's one /cluster read from the primary: roles, lag, the source's timeline, a demotion record. */
  members: HaClusterMember[] | undefined;
  systemIdentifier: string | undefined;
  rolePlan: RolePlan;
  replicaSource: ResolvedReplicaSource | undefined;
  capabilities: ServerCapabilities;
  /** What the builders build from. */
  ctx: BuildContext;
}

async function haMembers(deps: ReconcileDeps, pods: V1Pod[], primary: string | undefined): Promise<HaClusterMember[] | undefined> {
  const host = pods.find((pod) => pod.metadata?.name === primary)?.status?.podIP;
  if (!host) return undefined;
  try {
    return await deps.haNode.cluster(host);
  } catch {
    return undefined; // status then falls back to pod labels
  }
}

/** Reads the cluster's pods, its primary and members, the role it is to play, and the API server's capabilities. */
export async function observeCluster(deps: ReconcileDeps, cluster: DatabaseCluster, now: Date): Promise<Observed> {
  const { name, namespace } = cluster.metadata;
  const pods = await deps.api.listPods(namespace, selectorString(podSelector(name)));
  await useApiTls(deps, name, namespace, pods);
  const primary = primaryOf(pods, leaseHolder(await deps.api.readLeaderLease(namespace, names(name).leaderLease), now));
  const members = await haMembers(deps, pods, primary);
  const systemIdentifier = systemIdentifierOf(members) ?? cluster.status?.systemIdentifier;
  const rolePlan = planRole(cluster, members, await observeRole(deps, cluster, pods, primary, members));
  // A standby cluster whose source cannot be resolved is refused before any pod could initdb
  // (and a primary asked to follow another database system before it stops).
  const replicaSource = rolePlan.followSource
    ? await resolveReplicaSource(deps, cluster, { swapping: rolePlan.swapping, ...(systemIdentifier ? { systemIdentifier } : {}) })
    : undefined;
  const ctx: BuildContext = { cluster, operatorVersion: deps.operatorVersion, ...(replicaSource ? { standby: replicaSource.target } : {}) };
  const capabilities = await deps.api.capabilities();
  return { pods, primary, members, systemIdentifier, rolePlan, replicaSource, capabilities, ctx };
}
