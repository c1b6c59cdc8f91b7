/**
 * Server-side apply, the subset that matters to kubectl and operators: upsert, merge of the
 * applied fields (lists with merge keys merged by key), removal of fields the manager applied
 * before but no longer does, a managedFields Apply entry per manager, and 409 conflicts when
 * another manager owns a field the applier would change (unless force=true).
 */
import { ApiError } from '../errors.js';
import { fromFieldsV1, listMergeKey, removeAt, splitPath, toFieldsV1, valueAt } from './fieldpaths.js';
import { ownedPaths } from './managed-fields.js';
import { clone, isJsonObject, jsonEqual, type JsonObject, type KubeObject, type ManagedFieldsEntry } from '../types.js';
import { nowTime } from './validation.js';

function mergeApplied(live: unknown, applied: unknown): unknown {
  if (isJsonObject(applied)) {
    const out: JsonObject = isJsonObject(live) ? clone(live) : {};
    for (const [k, v] of Object.entries(applied)) out[k] = mergeApplied(out[k], v);
    return out;
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    const key = listMergeKey(applied);
    if (key && (live.length === 0 || listMergeKey(live) === key)) {
      const out = live.map(clone);
      for (const item of applied as JsonObject[]) {
        const idx = out.findIndex((l) => isJsonObject(l) && l[key] === item[key]);
        if (idx >= 0) out[idx] = mergeApplied(out[idx], item);
        else out.push(clone(item));
      }
      return out;
    }
  }
  return clone(applied);
}

function describePath(path: string): string {
  return (
    '.' +
    splitPath(path)
      .map((s) => (s.startsWith('f:') ? s.slice(2) : `[${s.slice(2)}]`))
      .join('.')
      .replace(/\.\[/g, '[')
  );
}

export function applyServerSideApply(
  live: KubeObject | undefined,
  applied: KubeObject,
  manager: string,
  force: boolean,
  apiVersion: string,
  subresource?: string,
): KubeObject {
  const appliedPaths = ownedPaths(applied, subresource);
  const entries: ManagedFieldsEntry[] = (live?.metadata.managedFields ?? []).map((e) => ({ ...e, fieldsV1: clone(e.fieldsV1) }));
  const sameSub = (e: ManagedFieldsEntry): boolean => (e.subresource ?? '') === (subresource ?? '');
  const mine = entries.find((e) => e.manager === manager && e.operation === 'Apply' && sameSub(e));
  const previous = mine ? fromFieldsV1(mine.fieldsV1) : new Set<string>();

  if (live) {
    const conflicts: Array<{ manager: string; path: string }> = [];
    for (const entry of entries) {
      if (entry === mine || !sameSub(entry)) continue;
      const owned = fromFieldsV1(entry.fieldsV1);
      for (const [path, value] of appliedPaths) {
        if (owned.has(path) && !jsonEqual(valueAt(live, path), value)) conflicts.push({ manager: entry.manager, path });
      }
    }
    if (conflicts.length > 0 && !force) {
      const lines = conflicts.map((c) => `conflict with "${c.manager}": ${describePath(c.path)}`);
      throw new ApiError(409, 'Conflict', `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${lines.join('\n')}`, {
        causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: describePath(c.path) })),
      });
    }
    // Forced (or equal-valued) fields: changed ones move to the applier.
    for (const entry of entries) {
      if (entry === mine || !sameSub(entry)) continue;
      const owned = fromFieldsV1(entry.fieldsV1);
      for (const c of conflicts) if (c.manager === entry.manager) owned.delete(c.path);
      entry.fieldsV1 = toFieldsV1(owned);
    }
  }

  const base: JsonObject = live ? clone(live) : { apiVersion: applied.apiVersion, kind: applied.kind, metadata: { name: applied.metadata.name } };
  const appliedBody: JsonObject = clone(applied);
  if (subresource === 'status') {
    base.status = mergeApplied(base.status, appliedBody.status);
  } else {
    for (const [k, v] of Object.entries(appliedBody)) {
      if (k === 'metadata') continue;
      base[k] = mergeApplied(base[k], v);
    }
    const meta = base.metadata as JsonObject;
    for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
      const v = (applied.metadata as JsonObject)[k];
      if (v !== undefined) meta[k] = mergeApplied(meta[k], v);
    }
    if (applied.metadata.resourceVersion) meta.resourceVersion = applied.metadata.resourceVersion;
  }

  // Fields this manager applied before and dropped now are removed unless someone else owns them.
  const ownedByOthers = new Set<string>();
  for (const entry of entries) if (entry !== mine) for (const p of fromFieldsV1(entry.fieldsV1)) ownedByOthers.add(p);
  for (const path of previous) if (!appliedPaths.has(path) && !ownedByOthers.has(path)) removeAt(base, path);

  const applyEntry: ManagedFieldsEntry = {
    manager,
    operation: 'Apply',
    apiVersion,
    time: nowTime(),
    fieldsType: 'FieldsV1',
    fieldsV1: toFieldsV1(appliedPaths.keys()),
    ...(subresource ? { subresource } : {}),
  };
  const others = entries.filter((e) => e !== mine && Object.keys(e.fieldsV1).length > 0);
  (base.metadata as JsonObject).managedFields = [...others, applyEntry];
  return base as KubeObject;
}
