import { forbiddenJsonKeys } from '../../../lib/json-guard.js';

/**
 * PATCH /config merge semantics (Patroni's patch_config): objects merge recursively, null removes
 * a key (nested too), any other value replaces. Pure: the stored document is never mutated.
 * Results are built from null-prototype objects and a prototype key is refused outright, so no
 * document can reach Object.prototype however it was obtained.
 */
export type JsonObject = { [key: string]: unknown };

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Thrown when a patch holds `__proto__`, `constructor` or `prototype`; callers check first (lib/json-guard). */
export class ForbiddenKeyError extends Error {}

function emptyObject(): JsonObject {
  return Object.create(null) as JsonObject;
}

/**
 * Deep copy of a JSON value into null-prototype objects (the stored document comes from JSON, so
 * this is lossless). A prototype key is dropped: a document stored before such keys were refused
 * loses it on its next write instead of blocking every PATCH.
 */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => cloneJson(item)) as T;
  if (!isPlainObject(value)) return value;
  const copy = emptyObject();
  for (const [key, inner] of Object.entries(value)) {
    if (!forbiddenJsonKeys.has(key)) copy[key] = cloneJson(inner);
  }
  return copy as T;
}

/** Merges `patch` into a copy of `base`. A key whose object becomes empty after removals is kept empty. */
export function mergePatch(base: JsonObject, patch: JsonObject): JsonObject {
  const result = cloneJson(base);
  applyInto(result, patch);
  return result;
}

function applyInto(target: JsonObject, patch: JsonObject): void {
  for (const [key, value] of Object.entries(patch)) {
    if (forbiddenJsonKeys.has(key)) throw new ForbiddenKeyError(`key "${key}" is not allowed`);
    if (value === null) {
      delete target[key];
    } else if (isPlainObject(value)) {
      const current = Object.hasOwn(target, key) ? target[key] : undefined;
      const next: JsonObject = isPlainObject(current) ? current : emptyObject();
      applyInto(next, value);
      target[key] = next;
    } else {
      target[key] = cloneJson(value);
    }
  }
}

/** Removes every null value (a PUT body uses null only to mean "absent"). */
export function withoutNulls(document: JsonObject): JsonObject {
  return mergePatch({}, document);
}

/** Stable comparison of two JSON documents, ignoring key order. */
export function sameDocument(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
