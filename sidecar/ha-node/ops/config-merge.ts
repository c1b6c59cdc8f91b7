/**
 * PATCH /config merge semantics (Patroni's patch_config): objects merge recursively, null removes
 * a key (nested too), any other value replaces. Pure: the stored document is never mutated.
 */
export type JsonObject = { [key: string]: unknown };

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy of a JSON value (the stored document comes from JSON, so this is lossless). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Merges `patch` into a copy of `base`. A key whose object becomes empty after removals is kept empty. */
export function mergePatch(base: JsonObject, patch: JsonObject): JsonObject {
  const result = cloneJson(base);
  applyInto(result, patch);
  return result;
}

function applyInto(target: JsonObject, patch: JsonObject): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete target[key];
    } else if (isPlainObject(value)) {
      const current = target[key];
      const next: JsonObject = isPlainObject(current) ? current : {};
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
