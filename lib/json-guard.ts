/**
 * Guards for JSON that arrives from outside before any code walks or merges it: a nesting bound
 * checked on the text (so neither the parser nor a recursive walk can exhaust the stack), keys
 * that would reach an object's prototype when merged, and numbers JSON cannot carry back out
 * (`1e309` parses as Infinity and serialises as null). Pure functions.
 */

/** Keys a merge must never follow: they name the prototype chain, not data. */
export const forbiddenJsonKeys: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Deepest nesting of objects and arrays a request body may have. */
export const maxJsonDepth = 32;

export type GuardedJson = { ok: true; value: unknown } | { ok: false; problem: string };

/** Largest nesting depth of `[`/`{` in a JSON text, ignoring brackets inside strings; stops counting past `limit`. */
export function jsonTextDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
    }
  }
  return deepest;
}

/** Dotted path of a key below `parent` ("db.parameters.work_mem", "ignore_slots[2]"). */
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * The first problem of a parsed JSON value, with the path that holds it: a forbidden key, a
 * non-finite number or nesting deeper than `maxDepth`. Iterative, so any depth is safe to check.
 */
export function findUnsafeJson(value: unknown, maxDepth = maxJsonDepth): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const where = item.path === '' ? 'the top level' : `"${item.path}"`;
    if (typeof item.value === 'number' && !Number.isFinite(item.value)) return `${where} is not a finite number`;
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth >= maxDepth) return `${where} is nested deeper than ${maxDepth} levels`;
    if (Array.isArray(item.value)) {
      item.value.forEach((inner: unknown, index) => stack.push({ value: inner, path: childPath(item.path, index), depth: item.depth + 1 }));
      continue;
    }
    for (const key of Object.keys(item.value)) {
      if (forbiddenJsonKeys.has(key)) return `key "${key}" is not allowed (at ${where})`;
      stack.push({ value: (item.value as Record<string, unknown>)[key], path: childPath(item.path, key), depth: item.depth + 1 });
    }
  }
  return undefined;
}

/** Parses a JSON text within the bounds above; every refusal names what and where. */
export function parseGuardedJson(text: string, maxDepth = maxJsonDepth): GuardedJson {
  if (jsonTextDepth(text, maxDepth) > maxDepth) return { ok: false, problem: `the body is nested deeper than ${maxDepth} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { ok: false, problem: 'the body is not valid JSON' };
  }
  const problem = findUnsafeJson(value, maxDepth);
  return problem ? { ok: false, problem } : { ok: true, value };
}
