/** Pod template helpers shared by the StatefulSet and Deployment controllers. */
import { createHash } from 'node:crypto';
import type { V1LabelSelector, V1OwnerReference, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import { toDate } from '../node/time.js';

/** Stable short hash of a pod template (key order independent), like controller-revision-hash. */
export function templateHash(template: V1PodTemplateSpec | undefined): string {
  return createHash('sha256')
    .update(canonicalJson(template ?? {}))
    .digest('hex')
    .slice(0, 10);
}

export function canonicalJson(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function ownerReference(owner: { apiVersion: string; kind: string; metadata?: { name?: string; uid?: string } }): V1OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** matchLabels and matchExpressions evaluated against a label map. */
export function selectorMatches(selector: V1LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (have[key] !== value) return false;
  for (const expr of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(have, expr.key);
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
        if (!present || !values.includes(have[expr.key])) return false;
        break;
      case 'NotIn':
        if (present && values.includes(have[expr.key])) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** `a=b,c in (d,e)` form of a label selector for list calls. */
export function selectorString(selector: V1LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const expr of selector?.matchExpressions ?? []) {
    const values = (expr.values ?? []).join(',');
    if (expr.operator === 'In') parts.push(`${expr.key} in (${values})`);
    else if (expr.operator === 'NotIn') parts.push(`${expr.key} notin (${values})`);
    else if (expr.operator === 'Exists') parts.push(expr.key);
    else if (expr.operator === 'DoesNotExist') parts.push(`!${expr.key}`);
  }
  return parts.join(',');
}

export function isTerminating(pod: V1Pod): boolean {
  return toDate(pod.metadata?.deletionTimestamp) !== undefined;
}

export function isPodReady(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Ready for at least minReadySeconds. */
export function isPodAvailable(pod: V1Pod, minReadySeconds: number, now = Date.now()): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = toDate(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime);
  return since !== undefined && now - since.getTime() >= minReadySeconds * 1000;
}

export function isPodFinished(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Deep copy through JSON, turning client-node Dates into strings. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}
