import type { V1Pod } from '@kubernetes/client-node';
import type { DatabaseCluster } from '../../api/crd/types.js';
import { ordinalOf } from '../../api/naming.js';
import { isPodReady } from './status.js';

/**
 * Pure planners for day-2 operations. Each looks at the observed pods and returns at most one
 * step; the reconciler executes it and the next reconcile plans the next step, so a crash or a
 * lost leadership in the middle leaves nothing half-remembered.
 */

export const revisionLabel = 'controller-revision-hash';

export type Day2Step =
  | { type: 'none' }
  | { type: 'wait'; reason: string }
  | { type: 'switchover'; leader: string; candidate: string; reason: string }
  | { type: 'deletePod'; pod: string; reason: string };

function ordinal(cluster: DatabaseCluster, pod: V1Pod): number {
  return ordinalOf(cluster.metadata.name, pod.metadata?.name ?? '') ?? Number.MAX_SAFE_INTEGER;
}

/** A ready replica that will survive a scale-down to `instances`, lowest ordinal first. */
export function switchoverCandidate(
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string,
  instances: number,
  exclude: (pod: V1Pod) => boolean = () => false,
): string | undefined {
  return pods
    .filter((pod) => pod.metadata?.name !== primary && isPodReady(pod) && ordinal(cluster, pod) < instances && !exclude(pod))
    .sort((a, b) => ordinal(cluster, a) - ordinal(cluster, b))[0]?.metadata?.name;
}

/**
 * StatefulSet replicas to ask for. A scale-down removes the highest ordinals, so while the
 * primary sits above the new size the old size is kept and a switchover is planned first: a
 * scale-down never removes the primary.
 */
export function planScale(
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
  currentReplicas: number | undefined,
): { replicas: number; step: Day2Step } {
  const wanted = cluster.spec.instances;
  if (!primary || currentReplicas === undefined || wanted >= currentReplicas) return { replicas: wanted, step: { type: 'none' } };
  const primaryOrdinal = ordinalOf(cluster.metadata.name, primary) ?? 0;
  if (primaryOrdinal < wanted) return { replicas: wanted, step: { type: 'none' } };
  const candidate = switchoverCandidate(cluster, pods, primary, wanted);
  if (!candidate) return { replicas: currentReplicas, step: { type: 'wait', reason: 'no ready replica to take over before scaling down' } };
  return {
    replicas: currentReplicas,
    step: { type: 'switchover', leader: primary, candidate, reason: `scale-down to ${wanted} would remove primary ${primary}` },
  };
}

/**
 * Role-aware rolling update for an OnDelete StatefulSet: outdated replicas first (highest ordinal
 * first, one at a time, only while every pod is ready), then a switchover to an updated replica,
 * then the old primary, which by then is a replica.
 */
export function planRollout(
  cluster: DatabaseCluster,
  pods: V1Pod[],
  updateRevision: string | undefined,
  primary: string | undefined,
  expectedPods = pods.length,
): Day2Step {
  if (!updateRevision) return { type: 'none' };
  const outdated = pods.filter((pod) => pod.metadata?.labels?.[revisionLabel] && pod.metadata.labels[revisionLabel] !== updateRevision);
  if (outdated.length === 0) return { type: 'none' };
  if (pods.length < expectedPods || pods.some((pod) => !isPodReady(pod))) {
    return { type: 'wait', reason: 'waiting for every instance to be back and ready before replacing the next one' };
  }
  // Without a known primary (a Lease between holders, two pods labelled primary) any pod may be it:
  // replacing one could take the primary away first.
  if (!primary) return { type: 'wait', reason: 'rolling update: no primary known' };
  const replicas = outdated.filter((pod) => pod.metadata?.name !== primary).sort((a, b) => ordinal(cluster, b) - ordinal(cluster, a));
  if (replicas.length > 0) return { type: 'deletePod', pod: replicas[0]!.metadata!.name!, reason: 'rolling update: replica first' };
  const isOutdated = (pod: V1Pod) => outdated.includes(pod);
  const candidate = switchoverCandidate(cluster, pods, primary, Number.MAX_SAFE_INTEGER, isOutdated);
  if (candidate) return { type: 'switchover', leader: primary, candidate, reason: 'rolling update: move the primary to an updated replica' };
  return { type: 'deletePod', pod: primary, reason: 'rolling update: single instance' };
}

export interface SwitchoverState {
  targetInstance: string;
  result: 'Pending' | 'Succeeded' | 'Failed';
  message?: string;
  time?: string;
}

/** How long a requested switchover may stay pending before it is reported failed. */
export const switchoverTimeoutMs = 120_000;

/**
 * Declarative switchover: spec.switchover.targetInstance names who should be primary. Acted on
 * once per target; the outcome is kept in status.switchover (a failed target is not retried until
 * the spec names another one).
 */
export function planDeclarativeSwitchover(
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
  previous: SwitchoverState | undefined,
  now: Date,
): { step: Day2Step; state?: SwitchoverState } {
  const target = cluster.spec.switchover.targetInstance;
  if (!target) return { step: { type: 'none' }, state: previous };
  const stamp = now.toISOString();
  const sameTarget = previous?.targetInstance === target;
  if (primary === target) {
    if (sameTarget && previous?.result === 'Succeeded') return { step: { type: 'none' }, state: previous };
    return { step: { type: 'none' }, state: { targetInstance: target, result: 'Succeeded', message: `${target} is primary`, time: stamp } };
  }
  if (sameTarget && previous?.result === 'Failed') return { step: { type: 'none' }, state: previous };
  if (sameTarget && previous?.result === 'Succeeded') return { step: { type: 'none' }, state: previous };
  if (sameTarget && previous?.result === 'Pending' && previous.time && now.getTime() - Date.parse(previous.time) > switchoverTimeoutMs) {
    return {
      step: { type: 'none' },
      state: { targetInstance: target, result: 'Failed', message: `${target} did not become primary within ${switchoverTimeoutMs / 1000}s`, time: stamp },
    };
  }
  const pod = pods.find((p) => p.metadata?.name === target);
  if (!pod) return { step: { type: 'none' }, state: { targetInstance: target, result: 'Failed', message: `instance ${target} does not exist`, time: stamp } };
  if (!primary || !isPodReady(pod)) {
    return {
      step: { type: 'wait', reason: 'switchover waits for a primary and a ready target' },
      state: { targetInstance: target, result: 'Pending', time: sameTarget && previous?.time ? previous.time : stamp },
    };
  }
  const state: SwitchoverState = {
    targetInstance: target,
    result: 'Pending',
    message: `switching over from ${primary}`,
    time: sameTarget && previous?.time ? previous.time : stamp,
  };
  return { step: { type: 'switchover', leader: primary, candidate: target, reason: 'spec.switchover.targetInstance' }, state };
}
