/**
 * The small JSONPath subset used by printer columns and scale subresource paths:
 * `.a.b`, `.a[0]`, `.a[*].b` and `.a[?(@.type=="Ready")].status`.
 */
import { isJsonObject } from '../types.js';

type Step = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'all' } | { kind: 'filter'; field: string; value: string };

function parse(path: string): Step[] {
  const text = path.trim().replace(/^\{/, '').replace(/\}$/, '').replace(/^\$/, '');
  const steps: Step[] = [];
  const re = /\.([A-Za-z0-9_\-$/]+)|\[(\d+)\]|\[\*\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*["']([^"']*)["']\)\]|\['([^']+)'\]/g;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(text)) !== null) {
    if (m.index !== consumed) throw new Error(`unsupported JSONPath "${path}"`);
    consumed = m.index + m[0].length;
    if (m[1] !== undefined) steps.push({ kind: 'field', name: m[1] });
    else if (m[2] !== undefined) steps.push({ kind: 'index', index: Number(m[2]) });
    else if (m[3] !== undefined) steps.push({ kind: 'filter', field: m[3], value: m[4] });
    else if (m[5] !== undefined) steps.push({ kind: 'field', name: m[5] });
    else steps.push({ kind: 'all' });
  }
  if (consumed !== text.length) throw new Error(`unsupported JSONPath "${path}"`);
  return steps;
}

/** Throws for paths outside the subset, so CRDs using them are rejected at registration. */
export function checkJsonPath(path: string): void {
  parse(path);
}

/** All values the path selects (empty when nothing matches). */
export function evaluateJsonPath(obj: unknown, path: string): unknown[] {
  let nodes: unknown[] = [obj];
  for (const step of parse(path)) {
    const next: unknown[] = [];
    for (const node of nodes) {
      if (step.kind === 'field' && isJsonObject(node) && node[step.name] !== undefined) next.push(node[step.name]);
      else if (step.kind === 'index' && Array.isArray(node) && node[step.index] !== undefined) next.push(node[step.index]);
      else if (step.kind === 'all' && Array.isArray(node)) next.push(...node);
      else if (step.kind === 'filter' && Array.isArray(node)) {
        for (const item of node) {
          const v = step.field.split('.').reduce<unknown>((acc, k) => (isJsonObject(acc) ? acc[k] : undefined), item);
          if (v !== undefined && String(v) === step.value) next.push(item);
        }
      }
    }
    nodes = next;
  }
  return nodes;
}

/** Reads a dotted field path such as `.spec.replicas`. */
export function getPath(obj: unknown, path: string): unknown {
  return evaluateJsonPath(obj, path)[0];
}

/** Writes a dotted field path, creating objects on the way. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.replace(/^\./, '').split('.');
  let node: Record<string, unknown> = obj;
  for (const key of keys.slice(0, -1)) {
    if (!isJsonObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}
