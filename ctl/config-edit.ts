import { parse as parseYaml, stringify } from 'yaml';
import { findUnsafeJson, forbiddenJsonKeys } from '../lib/json-guard.js';
import { isPlainObject, sameDocument, type JsonObject } from '../sidecar/ha-node/ops/config-merge.js';

/**
 * Pure helpers of `keelson ctl edit-config`: --set k=v into a patch, the PATCH body that turns
 * one document into another (null removes), and a line diff for the confirmation prompt.
 */

/**
 * "db.parameters.work_mem=8MB" → {db: {parameters: {work_mem: "8MB"}}}; the value is read as YAML,
 * "null" removes. Only own keys are followed; a prototype key or a value JSON cannot carry
 * (YAML's .inf, which would travel as null and remove the key) is refused naming the --set.
 */
export function patchFromSets(sets: string[]): JsonObject {
  const patch: JsonObject = {};
  for (const item of sets) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`--set ${item}: expected key=value`);
    const path = item.slice(0, eq).trim().split('.');
    if (path.some((p) => p.length === 0)) throw new Error(`--set ${item}: empty key segment`);
    const forbidden = path.find((p) => forbiddenJsonKeys.has(p));
    if (forbidden) throw new Error(`--set ${item}: key "${forbidden}" is not allowed`);
    const raw = item.slice(eq + 1);
    let value: unknown;
    try {
      value = raw.trim() === '' ? null : (parseYaml(raw) as unknown);
    } catch {
      value = raw;
    }
    const unsafe = findUnsafeJson(value);
    if (unsafe) throw new Error(`--set ${item}: the value ${unsafe.replace('the top level', 'itself')}`);
    let node = patch;
    for (const key of path.slice(0, -1)) {
      const next = Object.hasOwn(node, key) ? node[key] : undefined;
      if (!isPlainObject(next)) node[key] = {};
      node = node[key] as JsonObject;
    }
    node[path.at(-1)!] = value === undefined ? null : value;
  }
  return patch;
}

/** The PATCH body that changes `before` into `after`: changed and new keys, null for removed ones. */
export function patchBetween(before: JsonObject, after: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (isPlainObject(old) && isPlainObject(value)) {
      const inner = patchBetween(old, value);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (!sameDocument(old, value)) {
      patch[key] = value;
    }
  }
  return patch;
}

export function toYaml(config: JsonObject): string {
  return stringify(config, { sortMapEntries: true });
}

/** Reads an edited YAML document; an empty file means "no change". Prototype keys and .inf/.nan are refused. */
export function fromYaml(text: string): JsonObject {
  const value = parseYaml(text) as unknown;
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) throw new Error('the edited configuration must be a YAML mapping');
  const unsafe = findUnsafeJson(value);
  if (unsafe) throw new Error(`the edited configuration is refused: ${unsafe}`);
  return value;
}

/** A unified-style line diff (LCS), enough for configuration documents of a few hundred lines. */
export function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = ['--- current', '+++ new'];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i]}`);
      i += 1;
      j += 1;
    } else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(`+${b[j]}`);
      j += 1;
    } else {
      out.push(`-${a[i]}`);
      i += 1;
    }
  }
  return out.filter((line, index, all) => !(index === all.length - 1 && line === ' ')).join('\n') + '\n';
}
