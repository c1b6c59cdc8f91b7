/**
 * Field paths in the managedFields "FieldsV1" notation: `f:spec` for a field, `k:{"name":"x"}`
 * for a list item identified by its merge key. Leaves are whole values; lists without a merge
 * key are atomic leaves.
 */
import { isJsonObject, type JsonObject } from '../types.js';

const separator = '\u0000';

/** Merge key of list items (`name` for containers, env...), if the items have one. */
export function listMergeKey(items: unknown[]): string | undefined {
  if (items.length === 0 || !items.every(isJsonObject)) return undefined;
  for (const key of ['name', 'containerPort', 'mountPath', 'type', 'uid', 'ip', 'devicePath']) {
    if (items.every((i) => (i as JsonObject)[key] !== undefined)) {
      if (key === 'containerPort' || key === 'name' || key === 'mountPath' || key === 'type' || key === 'uid' || key === 'ip' || key === 'devicePath')
        return key;
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

function step(node: unknown, seg: string): unknown {
  if (seg.startsWith('f:')) return isJsonObject(node) ? node[seg.slice(2)] : undefined;
  if (seg.startsWith('k:') && Array.isArray(node)) {
    const [k, v] = Object.entries(JSON.parse(seg.slice(2)) as JsonObject)[0];
    return node.find((i) => isJsonObject(i) && i[k] === v);
  }
  return undefined;
}

function deleteChild(container: unknown, seg: string): void {
  if (seg.startsWith('f:') && isJsonObject(container)) delete container[seg.slice(2)];
  else if (seg.startsWith('k:') && Array.isArray(container)) {
    const [k, v] = Object.entries(JSON.parse(seg.slice(2)) as JsonObject)[0];
    const idx = container.findIndex((i) => isJsonObject(i) && i[k] === v);
    if (idx >= 0) container.splice(idx, 1);
  }
}

/** Nothing left but (for a list item) its own key: the applier's removal emptied it. */
function emptied(value: unknown, seg: string): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (!isJsonObject(value)) return false;
  if (seg.startsWith('k:')) {
    const key = Object.keys(JSON.parse(seg.slice(2)) as JsonObject)[0];
    return Object.keys(value).every((k) => k === key);
  }
  return Object.keys(value).length === 0;
}

/**
 * Removes the value at a path and prunes objects and list items that the removal left empty.
 * A list item's key field is never removed on its own: the item goes once nothing else is left.
 */
export function removeAt(obj: JsonObject, path: string): void {
  const segs = splitPath(path);
  // chain[i] is where segs[i] is looked up; chain[i + 1] is what it found.
  const chain: unknown[] = [obj];
  for (const seg of segs) {
    const next = step(chain[chain.length - 1], seg);
    if (next === undefined) return;
    chain.push(next);
  }
  const last = segs.length - 1;
  const parent = segs[last - 1];
  const isItemKey = parent !== undefined && parent.startsWith('k:') && segs[last] === `f:${Object.keys(JSON.parse(parent.slice(2)) as JsonObject)[0]}`;
  if (!isItemKey) deleteChild(chain[last], segs[last]);
  for (let j = last - 1; j >= 0; j -= 1) {
    if (!emptied(chain[j + 1], segs[j])) break;
    deleteChild(chain[j], segs[j]);
  }
}
