/** `metadata.managedFields` bookkeeping for Update operations (PUT, merge/json/strategic patches). */
import { fromFieldsV1, leafPaths, toFieldsV1 } from './fieldpaths.js';
import { jsonEqual, type KubeObject, type ManagedFieldsEntry } from '../types.js';
import { nowTime } from './validation.js';

/** Fields a manager may own: everything but identity metadata and managedFields itself. */
export function ownedPaths(o: KubeObject, subresource?: string): Map<string, unknown> {
  const copy: Record<string, unknown> = { ...o };
  delete copy.apiVersion;
  delete copy.kind;
  const meta = { ...(o.metadata ?? {}) };
  for (const k of [
    'name',
    'namespace',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'managedFields',
    'selfLink',
    'generateName',
  ])
    delete meta[k];
  if (Object.keys(meta).length > 0) copy.metadata = meta;
  else delete copy.metadata;
  if (subresource === 'status') return leafPaths({ status: copy.status });
  if (subresource !== 'status') delete copy.status;
  return leafPaths(copy);
}

/**
 * Records that `manager` wrote the fields that differ between old and next (all fields on create),
 * taking them away from other managers, as the real field manager does for Update operations.
 */
export function recordManager(
  next: KubeObject,
  old: KubeObject | undefined,
  manager: string | undefined,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  subresource?: string,
): void {
  if (!manager || operation === 'Apply') return;
  const after = ownedPaths(next, subresource);
  const before = old ? ownedPaths(old, subresource) : new Map<string, unknown>();
  const changed = [...after.keys()].filter((p) => !before.has(p) || !jsonEqual(before.get(p), after.get(p)));
  const removed = [...before.keys()].filter((p) => !after.has(p));
  if (changed.length === 0 && removed.length === 0) return;
  const entries: ManagedFieldsEntry[] = (next.metadata.managedFields ?? []).map((e) => ({ ...e }));
  const touched = new Set([...changed, ...removed]);
  for (const entry of entries) {
    if (entry.manager === manager && entry.operation === 'Update' && (entry.subresource ?? '') === (subresource ?? '')) continue;
    const paths = fromFieldsV1(entry.fieldsV1);
    for (const p of touched) paths.delete(p);
    entry.fieldsV1 = toFieldsV1(paths);
  }
  let mine = entries.find((e) => e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === (subresource ?? ''));
  if (!mine) {
    mine = { manager, operation: 'Update', apiVersion, time: nowTime(), fieldsType: 'FieldsV1', fieldsV1: {}, ...(subresource ? { subresource } : {}) };
    entries.push(mine);
  }
  const paths = fromFieldsV1(mine.fieldsV1);
  for (const p of changed) paths.add(p);
  for (const p of removed) paths.delete(p);
  mine.fieldsV1 = toFieldsV1(paths);
  mine.time = nowTime();
  mine.apiVersion = apiVersion;
  next.metadata.managedFields = entries.filter((e) => Object.keys(e.fieldsV1).length > 0);
}
