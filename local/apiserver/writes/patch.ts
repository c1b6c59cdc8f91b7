/** JSON patch (RFC 6902), JSON merge patch (RFC 7386) and the strategic-merge subset kubectl uses. */
import { ApiError } from '../errors.js';
import { clone, isJsonObject, jsonEqual, type JsonObject } from '../types.js';

function patchError(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchError(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: unknown, path: string[], op: string, pointer: string): { parent: unknown; key: string } {
  let node = doc;
  for (const seg of path.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(seg)];
    else if (isJsonObject(node)) node = node[seg];
    else node = undefined;
    if (node === undefined)
      throw patchError(`the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${pointer}"`);
  }
  return { parent: node, key: path[path.length - 1] };
}

function readPath(doc: unknown, pointer: string, op: string): unknown {
  let node = doc;
  for (const seg of decodePointer(pointer)) {
    if (Array.isArray(node)) node = node[Number(seg)];
    else if (isJsonObject(node)) node = Object.prototype.hasOwnProperty.call(node, seg) ? node[seg] : undefined;
    else node = undefined;
    if (node === undefined)
      throw patchError(`the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${pointer}"`);
  }
  return node;
}

function arrayIndex(arr: unknown[], key: string, allowEnd: boolean, pointer: string): number {
  if (key === '-' && allowEnd) return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw patchError(`invalid array index "${key}" in "${pointer}"`);
  const idx = Number(key);
  if (idx > arr.length || (!allowEnd && idx === arr.length)) throw patchError(`array index ${idx} out of bounds in "${pointer}"`);
  return idx;
}

function addAt(doc: unknown, pointer: string, value: unknown, op: string): unknown {
  const path = decodePointer(pointer);
  if (path.length === 0) return clone(value);
  const { parent, key } = parentOf(doc, path, op, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true, pointer), 0, clone(value));
  else if (isJsonObject(parent)) parent[key] = clone(value);
  else throw patchError(`${op} operation does not apply: doc is missing path: "${pointer}"`);
  return doc;
}

function removeAt(doc: unknown, pointer: string, op: string): unknown {
  const path = decodePointer(pointer);
  const { parent, key } = parentOf(doc, path, op, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, false, pointer), 1);
  else if (isJsonObject(parent) && Object.prototype.hasOwnProperty.call(parent, key)) delete parent[key];
  else throw patchError(`the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: "${pointer}"`);
  return doc;
}

/** Applies an RFC 6902 patch; any failing operation (including `test`) rejects the whole patch. */
export function applyJsonPatch(document: JsonObject, operations: unknown): JsonObject {
  if (!Array.isArray(operations)) throw new ApiError(400, 'BadRequest', 'json patch must be an array of operations');
  let doc: unknown = clone(document);
  for (const raw of operations) {
    if (!isJsonObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new ApiError(400, 'BadRequest', `invalid json patch operation: ${JSON.stringify(raw)}`);
    }
    const { op, path } = raw;
    switch (op) {
      case 'add':
        doc = addAt(doc, path, raw.value, op);
        break;
      case 'remove':
        doc = removeAt(doc, path, op);
        break;
      case 'replace':
        readPath(doc, path, op);
        doc = addAt(removeAt(doc, path, op), path, raw.value, op);
        break;
      case 'move': {
        const value = readPath(doc, String(raw.from), op);
        doc = addAt(removeAt(doc, String(raw.from), op), path, value, op);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, readPath(doc, String(raw.from), op), op);
        break;
      case 'test':
        if (!jsonEqual(readPath(doc, path, op), raw.value))
          throw patchError(`the server rejected our request due to an error in our request: testing value ${path} failed`);
        break;
      default:
        throw new ApiError(400, 'BadRequest', `unexpected json patch operation "${op}"`);
    }
  }
  if (!isJsonObject(doc)) throw patchError('json patch must leave an object');
  return doc;
}

/** RFC 7386: objects merge recursively, null deletes, everything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return clone(patch);
  const result: JsonObject = isJsonObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/**
 * Merge keys of built-in list fields, by field name. This is the subset kubectl's three-way
 * patches touch; other lists are replaced atomically, as with merge patch.
 */
const mergeKeys: Record<string, string | ((item: JsonObject) => string)> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
  ports: (item) => ('containerPort' in item ? 'containerPort' : 'port'),
};

/** Primitive lists merged as sets. */
const setLists = new Set(['finalizers']);

function mergeKeyFor(field: string, sample: JsonObject | undefined): string | undefined {
  const key = mergeKeys[field];
  if (typeof key === 'function') return sample ? key(sample) : undefined;
  return key;
}

function mergeList(field: string, original: unknown, patch: unknown[], order: unknown[] | undefined): unknown[] {
  if (setLists.has(field) && Array.isArray(original)) {
    const merged = [...original];
    for (const v of patch) if (!merged.some((o) => jsonEqual(o, v))) merged.push(clone(v));
    return merged;
  }
  const sample = patch.find(isJsonObject) ?? (Array.isArray(original) ? original.find(isJsonObject) : undefined);
  const key = mergeKeyFor(field, sample);
  if (!key || !Array.isArray(original)) {
    return patch.filter((p) => !(isJsonObject(p) && p.$patch === 'delete')).map((p) => (isJsonObject(p) ? stripDirectives(p) : clone(p)));
  }
  if (patch.some((p) => isJsonObject(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isJsonObject(p) && p.$patch === 'replace')).map(clone);
  }
  const result: unknown[] = original.map(clone);
  for (const item of patch) {
    if (!isJsonObject(item)) continue;
    const idx = result.findIndex((r) => isJsonObject(r) && jsonEqual(r[key], item[key]));
    if (item.$patch === 'delete') {
      if (idx >= 0) result.splice(idx, 1);
      continue;
    }
    if (idx >= 0) result[idx] = strategicMerge(result[idx] as JsonObject, item);
    else result.push(stripDirectives(item));
  }
  if (order) {
    const position = (r: unknown): number => {
      const i = isJsonObject(r) ? order.findIndex((o) => isJsonObject(o) && jsonEqual(o[key], r[key])) : -1;
      return i < 0 ? Number.MAX_SAFE_INTEGER : i;
    };
    result.sort((a, b) => position(a) - position(b));
  }
  return result;
}

function stripDirectives(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith('$')) continue;
    out[k] = isJsonObject(v) ? stripDirectives(v) : clone(v);
  }
  return out;
}

/** Strategic merge patch subset: merge-key lists, `$patch`, `$setElementOrder`, `$deleteFromPrimitiveList`, `$retainKeys`. */
export function strategicMerge(original: JsonObject, patch: JsonObject): JsonObject {
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch === 'delete') return {};
  let result: JsonObject = clone(original);
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    result = Object.fromEntries(Object.entries(result).filter(([k]) => keep.has(k)));
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith('$setElementOrder/')) continue;
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) result[field] = current.filter((v) => !value.some((d) => jsonEqual(d, v)));
      continue;
    }
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      const order = patch[`$setElementOrder/${key}`];
      result[key] = mergeList(key, result[key], value, Array.isArray(order) ? order : undefined);
    } else if (isJsonObject(value)) {
      const current = result[key];
      result[key] = strategicMerge(isJsonObject(current) ? current : {}, value);
    } else {
      result[key] = value;
    }
  }
  for (const key of Object.keys(patch)) {
    if (!key.startsWith('$setElementOrder/')) continue;
    const field = key.slice('$setElementOrder/'.length);
    const order = patch[key];
    if (patch[field] === undefined && Array.isArray(order) && Array.isArray(result[field])) {
      result[field] = mergeList(field, result[field], [], order);
    }
  }
  return result;
}
