/**
 * StatefulSet semantics as pure functions: pod identity (`<set>-<ordinal>`, hostname, subdomain,
 * claims `<template>-<set>-<ordinal>`), and the next actions for the controller:
 * - OrderedReady (default): create ordinals one at a time, each only after all lower ones are
 *   Running and Ready; scale down from the highest ordinal, one at a time;
 * - Parallel: create and delete all at once;
 * - RollingUpdate (default): once every pod exists and is ready, delete the highest ordinal
 *   (>= partition) that is not on the update revision; it comes back on the new revision;
 * - OnDelete: pods change revision only when someone deletes them.
 * Failed or succeeded pods are deleted so that they are recreated.
 */
import type { V1PersistentVolumeClaim, V1Pod, V1StatefulSet, V1StatefulSetStatus } from '@kubernetes/client-node';
import { isPodAvailable, isPodReady, isTerminating, ownerReference, plain, templateHash, isPodFinished } from './pod-template.js';

export const revisionLabel = 'controller-revision-hash';
export const podNameLabel = 'statefulset.kubernetes.io/pod-name';
export const podIndexLabel = 'apps.kubernetes.io/pod-index';

export type StatefulSetAction = { type: 'create'; ordinal: number } | { type: 'delete'; pod: V1Pod; reason: string };

export function updateRevision(set: V1StatefulSet): string {
  return `${set.metadata?.name}-${templateHash(set.spec?.template)}`;
}

export function podOrdinal(set: V1StatefulSet, pod: V1Pod): number | undefined {
  const prefix = `${set.metadata?.name}-`;
  const name = pod.metadata?.name ?? '';
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

export function claimName(templateName: string, set: V1StatefulSet, ordinal: number): string {
  return `${templateName}-${set.metadata?.name}-${ordinal}`;
}

export function claimsFor(set: V1StatefulSet, ordinal: number): V1PersistentVolumeClaim[] {
  const retention = set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? 'Retain';
  return (set.spec?.volumeClaimTemplates ?? []).map((template) => {
    const claim = plain(template);
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName(template.metadata?.name ?? '', set, ordinal),
        namespace: set.metadata?.namespace,
        labels: { ...(template.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
        annotations: template.metadata?.annotations,
        ownerReferences: retention === 'Delete' ? [ownerReference({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: set.metadata })] : undefined,
      },
      spec: claim.spec,
    };
  });
}

export function podFor(set: V1StatefulSet, ordinal: number): V1Pod {
  const name = `${set.metadata?.name}-${ordinal}`;
  const template = plain(set.spec?.template ?? {});
  const spec = template.spec ?? { containers: [] };
  const claimVolumes = (set.spec?.volumeClaimTemplates ?? []).map((t) => ({
    name: t.metadata?.name ?? '',
    persistentVolumeClaim: { claimName: claimName(t.metadata?.name ?? '', set, ordinal) },
  }));
  const claimNames = new Set(claimVolumes.map((v) => v.name));
  spec.volumes = [...(spec.volumes ?? []).filter((v) => !claimNames.has(v.name)), ...claimVolumes];
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...template.metadata,
      name,
      namespace: set.metadata?.namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        [podNameLabel]: name,
        [podIndexLabel]: String(ordinal),
        [revisionLabel]: updateRevision(set),
      },
      ownerReferences: [ownerReference({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: set.metadata })],
    },
    spec,
  };
}

/** Next actions for a StatefulSet given its current pods (those it owns). */
export function planStatefulSet(set: V1StatefulSet, pods: V1Pod[]): StatefulSetAction[] {
  const replicas = set.spec?.replicas ?? 1;
  const parallel = set.spec?.podManagementPolicy === 'Parallel';
  const revision = updateRevision(set);
  const byOrdinal = new Map<number, V1Pod>();
  for (const pod of pods) {
    const ordinal = podOrdinal(set, pod);
    if (ordinal !== undefined) byOrdinal.set(ordinal, pod);
  }
  const actions: StatefulSetAction[] = [];
  const anyTerminating = [...byOrdinal.values()].some(isTerminating);

  // Replace finished pods first; they never become ready again.
  for (const pod of byOrdinal.values()) {
    if (!isTerminating(pod) && isPodFinished(pod)) actions.push({ type: 'delete', pod, reason: `pod phase ${pod.status?.phase}` });
  }
  if (actions.length > 0 && !parallel) return actions.slice(0, 1);

  for (let ordinal = 0; ordinal < replicas; ordinal += 1) {
    const pod = byOrdinal.get(ordinal);
    if (!pod) {
      actions.push({ type: 'create', ordinal });
      if (!parallel) return actions;
      continue;
    }
    if (!parallel && (isTerminating(pod) || !isPodReady(pod))) return actions;
  }

  const condemned = [...byOrdinal.entries()].filter(([ordinal]) => ordinal >= replicas).sort(([a], [b]) => b - a);
  for (const [, pod] of condemned) {
    if (isTerminating(pod)) {
      if (!parallel) return actions;
      continue;
    }
    actions.push({ type: 'delete', pod, reason: 'scale down' });
    if (!parallel) return actions;
  }
  if (condemned.length > 0 || actions.length > 0) return actions;

  const strategy = set.spec?.updateStrategy?.type ?? 'RollingUpdate';
  if (strategy !== 'RollingUpdate' || anyTerminating) return actions;
  const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  const all = [...byOrdinal.entries()].filter(([ordinal]) => ordinal < replicas);
  if (all.length < replicas || !all.every(([, pod]) => isPodReady(pod))) return actions;
  const stale = all.filter(([ordinal, pod]) => ordinal >= partition && pod.metadata?.labels?.[revisionLabel] !== revision).sort(([a], [b]) => b - a);
  if (stale.length > 0) actions.push({ type: 'delete', pod: stale[0][1], reason: `rolling update to ${revision}` });
  return actions;
}

export function statefulSetStatus(set: V1StatefulSet, pods: V1Pod[]): V1StatefulSetStatus {
  const revision = updateRevision(set);
  const owned = pods.filter((p) => podOrdinal(set, p) !== undefined);
  const live = owned.filter((p) => !isTerminating(p));
  const updated = live.filter((p) => p.metadata?.labels?.[revisionLabel] === revision).length;
  const ready = live.filter(isPodReady).length;
  const replicas = set.spec?.replicas ?? 1;
  const previous = set.status?.currentRevision;
  const currentRevision = updated >= replicas && live.length === replicas ? revision : (previous ?? revision);
  return {
    observedGeneration: set.metadata?.generation,
    replicas: live.length,
    readyReplicas: ready,
    availableReplicas: live.filter((p) => isPodAvailable(p, set.spec?.minReadySeconds ?? 0)).length,
    currentReplicas: live.filter((p) => p.metadata?.labels?.[revisionLabel] === currentRevision).length,
    updatedReplicas: updated,
    currentRevision,
    updateRevision: revision,
    collisionCount: set.status?.collisionCount ?? 0,
  };
}
