/**
 * Deployment semantics without ReplicaSets (see docs/adr/0350): the Deployment owns its pods
 * directly, each labelled `pod-template-hash` with the hash of the template that made it.
 * RollingUpdate honours maxSurge/maxUnavailable (defaults 25 %, surge rounded up, unavailable
 * rounded down, never both 0); Recreate deletes every old pod before creating new ones.
 */
import { randomBytes } from 'node:crypto';
import type { V1Deployment, V1DeploymentCondition, V1DeploymentStatus, V1Pod } from '@kubernetes/client-node';
import { kubeTime } from '../node/time.js';
import { isPodAvailable, isPodFinished, isPodReady, isTerminating, ownerReference, plain, templateHash } from './pod-template.js';

export const hashLabel = 'pod-template-hash';

export type DeploymentAction = { type: 'create'; count: number } | { type: 'delete'; pod: V1Pod; reason: string };

export function resolveIntOrPercent(value: number | string | undefined, fallback: string, total: number, roundUp: boolean): number {
  const raw = value ?? fallback;
  if (typeof raw === 'number') return raw;
  const match = /^(\d+)%$/.exec(raw);
  if (!match) return Number(raw) || 0;
  const exact = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

export function deploymentPod(deployment: V1Deployment): V1Pod {
  const hash = templateHash(deployment.spec?.template);
  const suffix = [...randomBytes(5)].map((b) => suffixAlphabet[b % suffixAlphabet.length]).join('');
  const template = plain(deployment.spec?.template ?? {});
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...template.metadata,
      name: `${deployment.metadata?.name}-${hash}-${suffix}`,
      namespace: deployment.metadata?.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [hashLabel]: hash },
      ownerReferences: [ownerReference({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: deployment.metadata })],
    },
    spec: template.spec ?? { containers: [] },
  };
}

/** Unready pods go first, then the youngest. */
function deletionOrder(a: V1Pod, b: V1Pod): number {
  const readyA = isPodReady(a) ? 1 : 0;
  const readyB = isPodReady(b) ? 1 : 0;
  if (readyA !== readyB) return readyA - readyB;
  return String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? ''));
}

export function planDeployment(deployment: V1Deployment, pods: V1Pod[]): DeploymentAction[] {
  const replicas = deployment.spec?.replicas ?? 1;
  const hash = templateHash(deployment.spec?.template);
  const actions: DeploymentAction[] = [];
  const live = pods.filter((p) => !isTerminating(p));
  for (const pod of live.filter(isPodFinished)) actions.push({ type: 'delete', pod, reason: `pod phase ${pod.status?.phase}` });
  const active = live.filter((p) => !isPodFinished(p));
  const current = active.filter((p) => p.metadata?.labels?.[hashLabel] === hash).sort(deletionOrder);
  const old = active.filter((p) => p.metadata?.labels?.[hashLabel] !== hash).sort(deletionOrder);

  if (deployment.spec?.paused) return actions;
  if (deployment.spec?.strategy?.type === 'Recreate') {
    if (old.length > 0) {
      for (const pod of old) actions.push({ type: 'delete', pod, reason: 'recreate' });
      return actions;
    }
    if (pods.some(isTerminating)) return actions;
  }

  const rolling = deployment.spec?.strategy?.rollingUpdate;
  let maxSurge = resolveIntOrPercent(rolling?.maxSurge, '25%', replicas, true);
  let maxUnavailable = resolveIntOrPercent(rolling?.maxUnavailable, '25%', replicas, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  if (deployment.spec?.strategy?.type === 'Recreate') {
    maxSurge = 0;
    maxUnavailable = replicas;
  }

  if (current.length > replicas) {
    for (const pod of current.slice(0, current.length - replicas)) actions.push({ type: 'delete', pod, reason: 'scale down' });
    return actions;
  }
  const total = current.length + old.length;
  const create = Math.max(0, Math.min(replicas - current.length, replicas + maxSurge - total));
  if (create > 0) actions.push({ type: 'create', count: create });

  if (old.length > 0) {
    const minReady = deployment.spec?.minReadySeconds ?? 0;
    const available = active.filter((p) => isPodAvailable(p, minReady)).length;
    let budget = available - (replicas - maxUnavailable);
    for (const pod of old) {
      const podAvailable = isPodAvailable(pod, minReady);
      if (podAvailable && budget <= 0) continue;
      if (podAvailable) budget -= 1;
      actions.push({ type: 'delete', pod, reason: 'rolling update' });
    }
  }
  return actions;
}

function condition(type: string, ok: boolean, reason: string, message: string, previous: V1DeploymentCondition[] | undefined): V1DeploymentCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  const now = kubeTime() as unknown as Date;
  const lastTransitionTime = before && before.status === status && before.reason === reason ? before.lastTransitionTime : now;
  return {
    type,
    status,
    reason,
    message,
    lastTransitionTime,
    lastUpdateTime: before && before.status === status && before.reason === reason ? before.lastUpdateTime : now,
  };
}

export function deploymentStatus(deployment: V1Deployment, pods: V1Pod[]): V1DeploymentStatus {
  const hash = templateHash(deployment.spec?.template);
  const replicas = deployment.spec?.replicas ?? 1;
  const live = pods.filter((p) => !isTerminating(p) && !isPodFinished(p));
  const updated = live.filter((p) => p.metadata?.labels?.[hashLabel] === hash);
  const available = live.filter((p) => isPodAvailable(p, deployment.spec?.minReadySeconds ?? 0)).length;
  const maxUnavailable = resolveIntOrPercent(deployment.spec?.strategy?.rollingUpdate?.maxUnavailable, '25%', replicas, false);
  const complete = updated.length === replicas && live.length === replicas && available >= replicas;
  const previous = deployment.status?.conditions;
  return {
    observedGeneration: deployment.metadata?.generation,
    replicas: live.length,
    updatedReplicas: updated.length,
    readyReplicas: live.filter(isPodReady).length,
    availableReplicas: available,
    unavailableReplicas: Math.max(replicas - available, 0),
    conditions: [
      available >= replicas - maxUnavailable
        ? condition('Available', true, 'MinimumReplicasAvailable', 'Deployment has minimum availability.', previous)
        : condition('Available', false, 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', previous),
      complete
        ? condition('Progressing', true, 'NewReplicaSetAvailable', `Deployment "${deployment.metadata?.name}" has successfully progressed.`, previous)
        : condition('Progressing', true, 'ReplicaSetUpdated', `Deployment "${deployment.metadata?.name}" is progressing.`, previous),
    ],
  };
}
