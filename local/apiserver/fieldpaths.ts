/**
 * Field paths in the managedFields "FieldsV1" notation: `f:spec` for a field, `k:{"name":"x"}`
 * for a list item identified by its merge key. Leaves are whole values; lists without a merge
 * key are atomic leaves.
 */
import { isJsonObject, type JsonObject } from './types.js';

const separator = '\u0000';

/** Merge key of list items (`name` for containers, env...), if the items have one. */
export function listMergeKey(items: unknown[]): string | undefined {
  if (items.length === 0 || !items.every(isJsonObject)) return undefined;
  for (const key of ['name', 'containerPort', 'mountPath', 'type', 'uid', 'ip', 'devicePath']) {
    if (items.every((i) => (i as JsonObject)[key] !== undefined)) {
      if (key === 'containerPort' || key === 'name' || key === 'mountPath' || key === 'type' || key === 'uid' || key === 'ip' || key === 'devicePath') return key;
    }
  }
  return undefined;
}

/** Leaf paths of a value, each joined into one string key, mapped to the leaf value. */
export function leafPaths(value: unknown, prefix: string[] = [], out = new Map<string, unknown>()): Map<string, unknown> {
  if (isJsonObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) if (v !== undefined) leafPaths(v, [...prefix, `f:${k}`], out);
  } else if (Array.isArray(value) && listMergeKey(value)) {
    const key = listMergeKey(value) as string;
    for (const item of value as JsonObject[]) leafPaths(item, [...prefix, `k:${JSON.stringify({ [key]: item[key] })}`], out);
  } else {
    out.set(prefix.join(separator), value);
  }
  return out;
}

export function splitPath(path: string): string[] {
  return path.split(separator);
}

/** The nested FieldsV1 document for a set of paths. */
export function toFieldsV1(paths: Iterable<string>): JsonObject {
  const root: JsonObject = {};
  for (const path of paths) {
    let node = root;
    for (const seg of splitPath(path)) {
      if (!isJsonObject(node[seg])) node[seg] = {};
      node = node[seg] as JsonObject;
    }
  }
  return root;
}

/** Flattens a FieldsV1 document back to leaf paths. */
export function fromFieldsV1(fields: unknown, prefix: string[] = [], out = new Set<string>()): Set<string> {
  if (!isJsonObject(fields)) return out;
  const children = Object.keys(fields).filter((k) => k !== '.');
  if (children.length === 0 && prefix.length > 0) out.add(prefix.join(separator));
  for (const k of children) fromFieldsV1(fields[k], [...prefix, k], out);
  return out;
}

/** The value at a path, or undefined. */
export function valueAt(obj: unknown, path: string): unknown {
  let node = obj;
  for (const seg of splitPath(path)) {
    if (seg.startsWith('f:') && isJsonObject(node)) node = node[seg.slice(2)];
    else if (seg.startsWith('k:') && Array.isArray(node)) {
      const key = JSON.parse(seg.slice(2)) as JsonObject;
      const [k, v] = Object.entries(key)[0];
      node = node.find((i) => isJsonObject(i) && i[k] === v);
    } else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Removes the value at a path and prunes objects/items that the removal left empty. */
export function removeAt(obj: JsonObject, path: string): void {
  const segs = splitPath(path);
  const trail: Array<{ container: unknown; seg: string }> = [];
  let node: unknown = obj;
  for (const seg of segs) {
    trail.push({ container: node, seg });
    if (seg.startsWith('f:') && isJsonObject(node)) node = node[seg.slice(2)];
    else if (seg.startsWith('k:') && Array.isArray(node)) {
      const [k, v] = Object.entries(JSON.parse(seg.slice(2)) as JsonObject)[0];
      node = node.find((i) => isJsonObject(i) && i[k] === v);
    } else return;
    if (node === undefined) return;
  }
  for (let i = trail.length - 1; i >= 0; i -= 1) {
    const { container, seg } = trail[i];
    if (seg.startsWith('f:') && isJsonObject(container)) delete container[seg.slice(2)];
    else if (seg.startsWith('k:') && Array.isArray(container)) {
      const [k, v] = Object.entries(JSON.parse(seg.slice(2)) as JsonObject)[0];
      const idx = container.findIndex((item) => isJsonObject(item) && item[k] === v);
      const item = container[idx] as JsonObject | undefined;
      // An item whose only remaining field is its key was removed by the applier.
      if (idx >= 0 && item && Object.keys(item).every((key) => key === k)) container.splice(idx, 1);
      else break;
    }
    const parent = i > 0 ? trail[i - 1] : undefined;
    if (!parent) break;
    const current = valueAt(obj, segs.slice(0, i).join(separator));
    const empty = (isJsonObject(current) && Object.keys(current).length === 0) || (Array.isArray(current) && current.length === 0);
    if (!empty) break;
  }
}
