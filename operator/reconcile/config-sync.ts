import type { V1Pod } from '@kubernetes/client-node';
import type { DatabaseCluster } from '../../api/crd/types.js';
import { Labels, Roles } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';
import type { StandbyTarget } from '../builders/context.js';
import { configPatch, desiredDynamicConfig } from '../builders/dynamic-config.js';
import { switchoverCandidate } from './day2.js';
import type { HaClusterMember } from '../hanode-client.js';
import { hashOf } from './hash.js';
import { isPodReady } from './status.js';

export interface ConfigSyncResult {
  /** Hash now accepted by ha-node (set when a PATCH succeeded or nothing differed). */
  appliedHash?: string;
  /** Something is still to do (a PATCH failed or restarts are pending). */
  pending: boolean;
  /**
   * This pass moved the change on: ha-node accepted the settings, or a member restarted or handed
   * over for its restart (after which the next member is ready to go at once).
   */
  acted?: 'settings' | 'restart';
}

/**
 * Pushes HA timings and PostgreSQL parameters to ha-node's dynamic configuration (PATCH /config on
 * the primary) when they changed, then rolls the restarts they need: replicas first, one at a
 * time, then a switchover, after which the old primary is a replica and restarts last.
 */
export async function syncDynamicConfig(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
  members: HaClusterMember[] | undefined,
  standby?: StandbyTarget,
): Promise<ConfigSyncResult> {
  const desired = desiredDynamicConfig(cluster, standby);
  const hash = hashOf(desired);
  const primaryPod = pods.find((pod) => pod.metadata?.name === primary);
  const host = primaryPod?.status?.podIP;
  if (cluster.status?.appliedConfigHash === hash) return restartPending(deps, cluster, pods, primary, members);
  if (!host || !primaryPod || !isPodReady(primaryPod)) return { pending: true };
  try {
    const current = await deps.haNode.getConfig(host);
    const result = await deps.haNode.patchConfig(host, configPatch(desired, current));
    if (result.status !== 200) {
      // ha-node's 400 names the field; without this Event the change would wait unexplained.
      if (result.status === 400) await deps.events.record(cluster.metadata, 'Warning', 'ConfigurationRefused', result.body.slice(0, 1000));
      return { pending: true };
    }
  } catch {
    return { pending: true };
  }
  await deps.events.record(cluster.metadata, 'Normal', 'ConfigurationApplied', 'HA and PostgreSQL settings sent to ha-node /config');
  return { appliedHash: hash, pending: true, acted: 'settings' };
}

/**
 * The pods whose member reports a pending restart. GET /cluster (already asked for the status)
 * carries every member's own record, pending_restart included, so only a pod missing from it is
 * asked directly (GET /): a healthy unchanged cluster costs no call here. A stale `true` only
 * sends a restart_pending request the member refuses when nothing is pending.
 */
async function podsPendingRestart(deps: ReconcileDeps, pods: V1Pod[], members: HaClusterMember[] | undefined): Promise<V1Pod[]> {
  const reported = new Map((members ?? []).map((member) => [member.name, member.pending_restart === true]));
  const pending: V1Pod[] = [];
  for (const pod of pods) {
    const listed = reported.get(pod.metadata?.name ?? '');
    if (listed !== undefined) {
      if (listed) pending.push(pod);
      continue;
    }
    const ip = pod.status?.podIP;
    if (!ip) continue;
    try {
      if ((await deps.haNode.nodeState(ip)).pending_restart) pending.push(pod);
    } catch {
      // an unreachable member is not restartable now; the next pass looks again
    }
  }
  return pending;
}

async function restartPending(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
  members: HaClusterMember[] | undefined,
): Promise<ConfigSyncResult> {
  if (pods.some((pod) => !isPodReady(pod))) return { pending: false };
  const pending = await podsPendingRestart(deps, pods, members);
  if (pending.length === 0) return { pending: false };
  const replica = pending.find((pod) => pod.metadata?.labels?.[Labels.role] === Roles.replica);
  const target = replica ?? pending[0]!;
  const name = target.metadata!.name!;
  if (name === primary && pods.length > 1) {
    const candidate = switchoverCandidate(cluster, pods, primary, Number.MAX_SAFE_INTEGER, (pod) => pending.includes(pod));
    if (candidate) {
      const result = await deps.haNode.switchover(target.status!.podIP!, primary, candidate).catch(() => undefined);
      if (result && (result.status === 200 || result.status === 202)) {
        await deps.events.record(cluster.metadata, 'Normal', 'Switchover', `${primary} → ${candidate}: restart needed on the primary`);
        return { pending: true, acted: 'restart' };
      }
      return { pending: true };
    }
  }
  // ha-node answers once PostgreSQL runs again and wakes its loop, which republishes its record.
  const result = await deps.haNode.restartPending(target.status!.podIP!).catch(() => undefined);
  if (result && result.status < 300) {
    await deps.events.record(cluster.metadata, 'Normal', 'Restarted', `restarted PostgreSQL on ${name} for a pending parameter change`);
    return { pending: true, acted: 'restart' };
  }
  return { pending: true };
}
