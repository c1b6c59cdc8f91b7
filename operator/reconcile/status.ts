import type { V1Pod } from '@kubernetes/client-node';
import type { Condition, DatabaseCluster, DatabaseClusterStatus, MemberStatus, Phase } from '../../api/crd/types.js';
import type { HaClusterMember } from '../hanode-client.js';
import { Labels, ordinalOf, podSelector, Roles, selectorString } from '../../api/naming.js';
import { hasStarted, recordOfPod } from './pod-instance.js';
import { AppliedCondition } from './refusals.js';
import { memberVolumes, usageSummary } from './volume-usage.js';
import { SyncStandbyCondition, syncStandbyState } from './sync-status.js';
import { isPodReady, notServed, routedTo, type ServedMember } from './serving.js';

export interface StatusInput {
  cluster: DatabaseCluster;
  pods: V1Pod[];
  /** Replicas the StatefulSet currently asks for. */
  statefulSetReplicas: number;
  /** Pods still on an old revision (a rolling update is under way). */
  outdatedPods: number;
  /** The primary as the leader Lease names it (reconcile/primary.ts); default: the one pod labelled primary. */
  primary?: string;
  /** Members as ha-node reports them, when reachable. */
  haMembers?: HaClusterMember[];
  switchover?: DatabaseClusterStatus['switchover'];
  targetPrimary?: string;
  /** What this API server cannot give the cluster (operator/capabilities.ts); adds the ApiFallback condition. */
  apiFallbacks?: string[];
  /** The addresses `<name>-rw` routes to, read while the cluster is not Ready (serving.ts); undefined: not read. */
  rwRoutes?: readonly string[];
  /** Every owned object was written: adds condition Applied=True (refusals set it False, reconcile/refusals.ts). */
  applied?: boolean;
  now: Date;
}

/** Condition type saying the server lacks an API version or kind the cluster would use. */
export const ApiFallbackCondition = 'ApiFallback';

export { isPodReady } from './serving.js';

/**
 * A member's role: the Lease's word when it names a primary (a stale primary label on a demoted
 * member then reads replica), else the label.
 */
function roleOf(podName: string, label: string | undefined, primary: string | undefined): MemberStatus['role'] {
  if (primary !== undefined) return podName === primary ? 'primary' : label === Roles.primary || label === Roles.replica ? 'replica' : 'unknown';
  return label === Roles.primary ? 'primary' : label === Roles.replica ? 'replica' : 'unknown';
}

/** Each member as status shows it, and what the Ready condition's reason is judged from. */
function members(input: StatusInput): Array<{ member: MemberStatus; served: ServedMember }> {
  const name = input.cluster.metadata.name;
  const fromHa = new Map((input.haMembers ?? []).map((m) => [m.name, m]));
  return input.pods
    .filter((pod) => ordinalOf(name, pod.metadata?.name ?? '') !== undefined)
    .sort((a, b) => (ordinalOf(name, a.metadata!.name!) ?? 0) - (ordinalOf(name, b.metadata!.name!) ?? 0))
    .map((pod) => {
      const podName = pod.metadata!.name!;
      const label = pod.metadata?.labels?.[Labels.role];
      // The Lease and ha-node's record may still describe the pod this one replaced.
      const started = hasStarted(pod);
      const ha = recordOfPod(pod, fromHa.get(podName));
      const role = started ? roleOf(podName, label, input.primary) : 'unknown';
      // Ready: its Service routes to it (pod Ready and labelled for its role), not just ha-node's word.
      const member: MemberStatus = { name: podName, role, ready: routedTo(pod, role) };
      const state = ha?.state ?? pod.status?.phase;
      if (state) member.state = state;
      if (typeof ha?.timeline === 'number') member.timeline = ha.timeline;
      if (typeof ha?.lag === 'number') member.lagBytes = ha.lag;
      const volumes = memberVolumes(ha);
      if (volumes) member.volumes = volumes;
      const served: ServedMember = {
        name: podName,
        role,
        podReady: isPodReady(pod),
        ...(ha?.state ? { state: ha.state } : {}),
        ...(label ? { label } : {}),
        ...(pod.status?.podIP ? { podIP: pod.status.podIP } : {}),
      };
      return { member, served };
    });
}

/**
 * Messages are never empty: kube-apiserver 1.20 built with Go >= 1.18 (our oracle) takes an
 * empty string in a custom resource for null and refuses it (see docs/operator.md).
 */
function condition(type: string, status: boolean, reason: string, message: string, previous: Condition[] | undefined, input: StatusInput): Condition {
  const value = status ? 'True' : 'False';
  const old = previous?.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === value ? old.lastTransitionTime : input.now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { type, status: value, reason, message, lastTransitionTime, observedGeneration: input.cluster.metadata.generation };
}

/** The status a cluster should show, from its pods and what ha-node reports; pure. */
export function computeStatus(input: StatusInput): DatabaseClusterStatus {
  const { cluster } = input;
  const previous = cluster.status?.conditions;
  const views = members(input);
  const list = views.map((v) => v.member);
  const ready = list.filter((m) => m.ready).length;
  const primaries = list.filter((m) => m.role === 'primary');
  const primary = primaries.length === 1 ? primaries[0]!.name : undefined;
  const wanted = cluster.spec.instances;
  const scaling = input.statefulSetReplicas !== wanted || list.length !== wanted;
  const updating = input.outdatedPods > 0;
  const switching = input.switchover?.result === 'Pending';
  const gap = notServed(
    views.map((v) => v.served),
    wanted,
    primary,
    cluster.metadata.name,
    input.rwRoutes,
  );
  const allReady = gap === undefined;
  const everReady =
    cluster.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ||
    cluster.status?.phase === 'Degraded' ||
    cluster.status?.phase === 'Healthy';
  // Synchronous modes: not Healthy until the primary names a synchronous standby (still Creating at first).
  const sync = syncStandbyState(cluster, input.haMembers);
  // Roles unknown this pass (the primary's ha-node did not answer): the last known word stands.
  const lastSync = cluster.spec.ha.synchronousMode === 'off' ? undefined : previous?.find((c) => c.type === SyncStandbyCondition);
  const syncGap = sync ? sync.gap : lastSync?.status === 'False' ? { reason: lastSync.reason, message: lastSync.message } : undefined;
  const served = cluster.status?.phase === 'Healthy' || cluster.status?.phase === 'Degraded';

  let phase: Phase;
  if (switching) phase = 'SwitchingOver';
  else if (updating) phase = 'Updating';
  else if ((!everReady && !allReady) || (syncGap && !served)) phase = 'Creating';
  else if (scaling) phase = 'Scaling';
  else if (allReady && !syncGap) phase = 'Healthy';
  else phase = 'Degraded';

  const progressingReason = switching ? 'SwitchingOver' : updating ? 'RollingUpdate' : phase === 'Creating' ? 'Creating' : scaling ? 'Scaling' : 'Stable';
  const degraded = (everReady && !allReady && !scaling && !updating && !switching) || phase === 'Degraded';
  const degradedReason = !degraded ? 'AsExpected' : gap ? gap.reason : (syncGap?.reason ?? 'InstancesNotReady');
  const degradedMessage = !degraded ? 'all instances as expected' : gap ? gap.message : syncGap ? syncGap.message : `${wanted - ready} instance(s) not ready`;
  const conditions = [
    condition('Ready', allReady, gap?.reason ?? 'AllInstancesReady', gap?.message ?? `${ready}/${wanted} instances ready, primary ${primary}`, previous, input),
    condition(
      'Progressing',
      progressingReason !== 'Stable',
      progressingReason,
      progressingReason === 'Stable' ? 'no change in progress' : `${progressingReason} in progress`,
      previous,
      input,
    ),
    condition('Degraded', degraded, degradedReason, degradedMessage, previous, input),
  ];
  if (input.apiFallbacks) {
    const fallbacks = input.apiFallbacks;
    conditions.push(
      condition(
        ApiFallbackCondition,
        fallbacks.length > 0,
        fallbacks.length > 0 ? 'ServerLacksApi' : 'AllApisServed',
        fallbacks.length > 0 ? fallbacks.join('; ') : 'every API the cluster uses is served',
        previous,
        input,
      ),
    );
  }
  if (sync) {
    const named = sync.named.join(', ');
    conditions.push(
      condition(SyncStandbyCondition, !sync.gap, sync.gap?.reason ?? 'Named', sync.gap?.message ?? `synchronous standby: ${named}`, previous, input),
    );
  } else if (lastSync) {
    conditions.push(lastSync);
  }
  if (input.applied) conditions.push(condition(AppliedCondition, true, 'AllObjectsApplied', 'every owned object matches the spec', previous, input));

  const status: DatabaseClusterStatus = {
    phase,
    conditions,
    observedGeneration: cluster.metadata.generation,
    instances: list.length,
    readyInstances: ready,
    selector: selectorString(podSelector(cluster.metadata.name)),
    members: list,
  };
  if (primary) status.currentPrimary = primary;
  const diskUsage = usageSummary(list);
  if (diskUsage) status.diskUsage = diskUsage;
  const target = input.targetPrimary ?? primary;
  if (target) status.targetPrimary = target;
  if (input.switchover) status.switchover = input.switchover;
  return status;
}

/** Status for a spec the operator cannot act on. */
export function invalidSpecStatus(
  cluster: { metadata: { generation?: number }; status?: DatabaseClusterStatus },
  message: string,
  now: Date,
): DatabaseClusterStatus {
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const keep = (type: string, status: 'True' | 'False') => {
    const old = cluster.status?.conditions?.find((c) => c.type === type);
    return old && old.status === status ? old.lastTransitionTime : at;
  };
  const generation = cluster.metadata.generation;
  return {
    ...cluster.status,
    phase: 'Pending',
    observedGeneration: generation,
    conditions: [
      { type: 'Ready', status: 'False', reason: 'InvalidSpec', message, lastTransitionTime: keep('Ready', 'False'), observedGeneration: generation },
      {
        type: 'Progressing',
        status: 'False',
        reason: 'InvalidSpec',
        message,
        lastTransitionTime: keep('Progressing', 'False'),
        observedGeneration: generation,
      },
      { type: 'Degraded', status: 'True', reason: 'InvalidSpec', message, lastTransitionTime: keep('Degraded', 'True'), observedGeneration: generation },
    ],
  };
}
