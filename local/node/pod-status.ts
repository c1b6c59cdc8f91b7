/**
 * Pod phase and conditions from container states, following the kubelet's rules:
 * Pending until every init container completed and every app container started once; Running
 * while any app container runs or will be restarted; Succeeded/Failed when all app containers
 * finished for good (Failed if any exited non-zero, or an init container failed under Never).
 */
import type { V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { kubeTime } from './time.js';

export interface ContainerView {
  ready: boolean;
  /** Has ever been started (the process ran at least once). */
  everStarted: boolean;
  finished: boolean;
  exitCode?: number;
  status: V1ContainerStatus;
}

export interface PodView {
  podIP?: string;
  hostIP: string;
  startTime: Date;
  init: ContainerView[];
  containers: ContainerView[];
  /** Init containers all completed. */
  initialized: boolean;
  /** An init container failed and will not be retried (restartPolicy Never). */
  initFailed: boolean;
  message?: string;
  reason?: string;
}

export function podPhase(view: PodView): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  if (view.initFailed) return 'Failed';
  if (!view.initialized) return 'Pending';
  if (view.containers.length > 0 && view.containers.every((c) => c.finished)) {
    return view.containers.every((c) => c.exitCode === 0) ? 'Succeeded' : 'Failed';
  }
  return view.containers.every((c) => c.everStarted) ? 'Running' : 'Pending';
}

function condition(type: string, ok: boolean, previous: V1PodCondition[] | undefined, now: string, reason?: string): V1PodCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  const lastTransitionTime = before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : (now as unknown as Date);
  const result: V1PodCondition = { type, status, lastTransitionTime, lastProbeTime: null as unknown as undefined };
  if (!ok && reason) result.reason = reason;
  return result;
}

export function buildPodStatus(view: PodView, previous: V1PodCondition[] | undefined, now = new Date()): V1PodStatus {
  const at = kubeTime(now);
  const phase = podPhase(view);
  const containersReady = view.initialized && view.containers.length > 0 && view.containers.every((c) => c.ready);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const conditions = [
    condition('PodReadyToStartContainers', view.podIP !== undefined && !terminal, previous, at),
    condition('Initialized', view.initialized, previous, at, 'ContainersNotInitialized'),
    condition('Ready', containersReady && !terminal, previous, at, terminal ? 'PodCompleted' : 'ContainersNotReady'),
    condition('ContainersReady', containersReady && !terminal, previous, at, terminal ? 'PodCompleted' : 'ContainersNotReady'),
    condition('PodScheduled', true, previous, at),
  ];
  const status: V1PodStatus = {
    phase,
    conditions,
    hostIP: view.hostIP,
    hostIPs: [{ ip: view.hostIP }],
    startTime: kubeTime(view.startTime) as unknown as Date,
    containerStatuses: view.containers.map((c) => c.status),
    qosClass: 'BestEffort',
  };
  if (view.podIP) {
    status.podIP = view.podIP;
    status.podIPs = [{ ip: view.podIP }];
  }
  if (view.init.length > 0) status.initContainerStatuses = view.init.map((c) => c.status);
  if (view.message) status.message = view.message;
  if (view.reason) status.reason = view.reason;
  return status;
}

/** The conditions this node writes; others (e.g. DisruptionTarget) belong to other writers. */
const ownConditions = new Set(['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);

/**
 * What must agree between the status the node reported and the one the API server holds: phase,
 * address, its own conditions' values and each container's readiness, start and state. Times and
 * messages are left out, so an echo of the node's own write always matches.
 */
export function statusDigest(status: V1PodStatus | undefined): string {
  const containers = (list: V1ContainerStatus[] | undefined) =>
    (list ?? []).map((c) => [
      c.name,
      c.ready,
      c.started ?? false,
      c.restartCount,
      c.state?.running ? 'running' : c.state?.terminated ? 'terminated' : c.state?.waiting ? 'waiting' : '',
    ]);
  const conditions = (status?.conditions ?? [])
    .filter((c) => ownConditions.has(c.type))
    .map((c) => `${c.type}=${c.status}`)
    .sort();
  return JSON.stringify([status?.phase, status?.podIP, conditions, containers(status?.initContainerStatuses), containers(status?.containerStatuses)]);
}
