import { createHash } from 'node:crypto';

/** JSON with sorted keys and undefined values dropped, so equal objects hash equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(normalize(value));
}

export function normalize(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : normalize(item)));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) out[key] = normalize(item);
  }
  return out;
}

export function hashOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 16);
}
