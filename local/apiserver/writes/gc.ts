/**
 * What kube-controller-manager does that clients notice: ownerReference garbage collection
 * (background, foreground, orphan) and namespace deletion. Runs in-process on store events.
 */
import type { Logger } from '../../../lib/log.js';
import { typeKeyOf, type ApiCore } from '../api.js';
import { ApiError } from '../errors.js';
import type { ResourceType } from '../schema/resources.js';
import { isJsonObject, type KubeObject } from '../types.js';

interface Located {
  type: ResourceType;
  object: KubeObject;
}

function storageTypes(core: ApiCore): ResourceType[] {
  // One type per storage key (CRDs may serve several versions of the same objects).
  const seen = new Map<string, ResourceType>();
  for (const t of core.registry.all()) if (!seen.has(typeKeyOf(t))) seen.set(typeKeyOf(t), t);
  return [...seen.values()];
}

function allObjects(core: ApiCore): Located[] {
  const out: Located[] = [];
  for (const type of storageTypes(core)) for (const object of core.store.list(typeKeyOf(type))) out.push({ type, object });
  return out;
}

function removeFinalizer(core: ApiCore, { type, object }: Located, finalizer: string): void {
  const finalizers = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  core.patch(type, object.metadata.namespace, object.metadata.name as string, 'merge', { metadata: { finalizers: finalizers.length ? finalizers : null } });
}

function ignoreGone(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return;
    throw err;
  }
}

/** One pass over the store; returns true when it changed something (then another pass runs). */
function collect(core: ApiCore): boolean {
  const objects = allObjects(core);
  const byUid = new Map(objects.map((o) => [o.object.metadata.uid as string, o]));
  const dependentsOf = new Map<string, Located[]>();
  for (const o of objects) for (const r of o.object.metadata.ownerReferences ?? []) dependentsOf.set(r.uid, [...(dependentsOf.get(r.uid) ?? []), o]);
  let changed = false;
  const mark = (fn: () => void): void => {
    ignoreGone(fn);
    changed = true;
  };

  for (const item of objects) {
    const { object } = item;
    const owners = object.metadata.ownerReferences ?? [];
    const dependents = dependentsOf.get(object.metadata.uid as string) ?? [];
    if (object.metadata.deletionTimestamp && object.metadata.finalizers?.includes('orphan')) {
      for (const d of dependents) {
        const refs = (d.object.metadata.ownerReferences ?? []).filter((r) => r.uid !== object.metadata.uid);
        mark(() =>
          core.patch(d.type, d.object.metadata.namespace, d.object.metadata.name as string, 'merge', {
            metadata: { ownerReferences: refs.length ? refs : null },
          }),
        );
      }
      mark(() => removeFinalizer(core, item, 'orphan'));
      continue;
    }
    if (object.metadata.deletionTimestamp && object.metadata.finalizers?.includes('foregroundDeletion')) {
      const blocking = dependents.filter((d) => d.object.metadata.ownerReferences?.some((r) => r.uid === object.metadata.uid && r.blockOwnerDeletion));
      for (const d of dependents) {
        if (!d.object.metadata.deletionTimestamp)
          mark(() => core.delete(d.type, d.object.metadata.namespace, d.object.metadata.name as string, { propagationPolicy: 'Foreground' }));
      }
      if (blocking.length === 0) mark(() => removeFinalizer(core, item, 'foregroundDeletion'));
      continue;
    }
    if (owners.length > 0 && !object.metadata.deletionTimestamp) {
      // An owner is gone if no object with that uid exists (or it is in another namespace).
      const alive = owners.filter((r) => {
        const owner = byUid.get(r.uid);
        return owner !== undefined && (!owner.type.namespaced || owner.object.metadata.namespace === object.metadata.namespace);
      });
      const ownerDeletingForeground = owners.some(
        (r) => byUid.get(r.uid)?.object.metadata.finalizers?.includes('foregroundDeletion') && byUid.get(r.uid)?.object.metadata.deletionTimestamp,
      );
      if (alive.length === 0 && !ownerDeletingForeground) {
        mark(() => core.delete(item.type, object.metadata.namespace, object.metadata.name as string, { propagationPolicy: 'Background' }));
      } else if (alive.length < owners.length) {
        const refs = owners.filter((r) => alive.includes(r));
        mark(() => core.patch(item.type, object.metadata.namespace, object.metadata.name as string, 'merge', { metadata: { ownerReferences: refs } }));
      }
    }
  }

  for (const ns of objects.filter((o) => o.type.plural === 'namespaces' && o.type.group === '' && o.object.metadata.deletionTimestamp)) {
    const name = ns.object.metadata.name as string;
    const contents = objects.filter((o) => o.type.namespaced && o.object.metadata.namespace === name);
    for (const c of contents)
      if (!c.object.metadata.deletionTimestamp) mark(() => core.delete(c.type, name, c.object.metadata.name as string, { propagationPolicy: 'Background' }));
    const spec = isJsonObject(ns.object.spec) ? ns.object.spec : {};
    const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
    if (contents.length === 0 && finalizers.includes('kubernetes')) {
      mark(() =>
        core.update(ns.type, undefined, name, { ...ns.object, spec: { ...spec, finalizers: finalizers.filter((f) => f !== 'kubernetes') } }, 'finalize'),
      );
    }
  }
  return changed;
}

/** Starts the collector; it runs shortly after every deletion-related change. Returns a stop function. */
export function startGarbageCollector(core: ApiCore, logger: Logger): () => void {
  let scheduled: NodeJS.Immediate | undefined;
  let stopped = false;
  const run = (): void => {
    scheduled = undefined;
    if (stopped) return;
    try {
      for (let pass = 0; pass < 20 && collect(core); pass += 1) {
        // repeat until nothing changes (bounded, in case of a cycle)
      }
    } catch (err) {
      logger.error({ err }, 'garbage collector pass failed');
    }
  };
  const unsubscribe = core.store.subscribe((event) => {
    const relevant =
      event.type === 'DELETED' || event.object.metadata.deletionTimestamp !== undefined || (event.object.metadata.ownerReferences?.length ?? 0) > 0;
    if (relevant && !scheduled && !stopped) scheduled = setImmediate(run);
  });
  return () => {
    stopped = true;
    unsubscribe();
    if (scheduled) clearImmediate(scheduled);
  };
}
