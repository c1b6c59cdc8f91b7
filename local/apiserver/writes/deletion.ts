/**
 * DELETE semantics: preconditions, propagation policies (as GC finalizers), finalizers holding an
 * object with deletionTimestamp, graceful pod deletion, namespaces going Terminating.
 */
import type { ObjectStore } from '../storage/store.js';
import { typeKeyOf, type DeleteOptions, type DeleteResult } from '../api-types.js';
import { conflict, notFound } from '../errors.js';
import type { ResourceType } from '../schema/resources.js';
import { clone, isJsonObject, jsonEqual, type KubeObject } from '../types.js';
import { nowTime } from './validation.js';

/** What deletion needs of the API core (api.ts), which calls it. */
export interface DeletionCore {
  readonly store: ObjectStore;
  find(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined;
  output(type: ResourceType, o: KubeObject): KubeObject;
}

export function deleteObject(core: DeletionCore, type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): DeleteResult {
  const old = core.find(type, namespace, name);
  if (!old) throw notFound(type.plural, type.group, name);
  const pre = options.preconditions ?? {};
  if (pre.uid && pre.uid !== old.metadata.uid) {
    throw conflict(type.plural, type.group, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
    throw conflict(
      type.plural,
      type.group,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
    );
  }
  const policy = options.propagationPolicy ?? (options.orphanDependents ? 'Orphan' : undefined);
  const next = clone(old);
  const finalizers = [...(next.metadata.finalizers ?? [])];
  if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
  if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
  if (policy === 'Background') {
    const i = finalizers.indexOf('foregroundDeletion');
    if (i >= 0 && !old.metadata.finalizers?.includes('foregroundDeletion')) finalizers.splice(i, 1);
  }
  if (finalizers.length > 0) next.metadata.finalizers = finalizers;
  const namespaceFinalizers = isJsonObject(old.spec) && Array.isArray(old.spec.finalizers) ? old.spec.finalizers : [];
  // A namespace waits for its spec finalizers (`kubernetes`: contents deleted first).
  const isNamespace = type.group === '' && type.plural === 'namespaces' && namespaceFinalizers.length > 0;
  const graceSeconds = gracePeriodOf(type, old, options);
  const pending = finalizers.length > 0 || isNamespace || graceSeconds > 0;
  if (!pending) {
    if (options.dryRun) return { object: old, removed: true };
    const gone = core.store.remove(typeKeyOf(type), old.metadata.namespace, name) as KubeObject;
    return { object: core.output(type, gone), removed: true };
  }
  if (next.metadata.deletionTimestamp) {
    // Already being deleted: only a shorter grace period or new GC finalizers change anything.
    const shorter = graceSeconds < (old.metadata.deletionGracePeriodSeconds ?? 0);
    if (shorter) {
      next.metadata.deletionGracePeriodSeconds = graceSeconds;
      next.metadata.deletionTimestamp = nowTime(new Date(Date.now() + graceSeconds * 1000));
    }
    if (!shorter && jsonEqual(next.metadata.finalizers, old.metadata.finalizers)) return { object: old, removed: false };
    if (graceSeconds === 0 && finalizers.length === 0 && !isNamespace) {
      const gone = core.store.remove(typeKeyOf(type), old.metadata.namespace, name) as KubeObject;
      return { object: core.output(type, gone), removed: true };
    }
  } else {
    next.metadata.deletionTimestamp = nowTime(new Date(Date.now() + graceSeconds * 1000));
    next.metadata.deletionGracePeriodSeconds = graceSeconds;
    if (type.tracksGeneration) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
    if (isNamespace) next.status = { ...(isJsonObject(next.status) ? next.status : {}), phase: 'Terminating' };
  }
  if (options.dryRun) return { object: next, removed: false };
  return { object: core.output(type, core.store.put(typeKeyOf(type), next)), removed: false };
}

/** Graceful deletion applies to pods bound to a node and not yet finished. */
function gracePeriodOf(type: ResourceType, old: KubeObject, options: DeleteOptions): number {
  if (!(type.group === '' && type.plural === 'pods')) return 0;
  const spec = isJsonObject(old.spec) ? old.spec : {};
  const phase = isJsonObject(old.status) ? old.status.phase : undefined;
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  const grace = options.gracePeriodSeconds ?? (typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30);
  return Math.max(0, grace);
}
