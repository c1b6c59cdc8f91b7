/** snake_case → camelCase for one key; camelCase keys pass through unchanged. */
export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** camelCase → snake_case for one key (column names). */
export function snakeKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Request bodies accept snake_case and camelCase: keys of plain objects (also nested ones and
 * objects inside arrays) are turned into camelCase. When both spellings are sent the camelCase one
 * wins. Values are never touched.
 */
export function camelizeBody(body: unknown, depth = 0): unknown {
  if (depth > 8 || body === null || typeof body !== 'object') return body;
  if (Array.isArray(body)) return body.map((item) => camelizeBody(item, depth + 1));
  const out: Record<string, unknown> = {};
  const entries = Object.entries(body as Record<string, unknown>);
  for (const [key, value] of entries) if (key.includes('_')) out[camelKey(key)] = camelizeBody(value, depth + 1);
  for (const [key, value] of entries) if (!key.includes('_')) out[key] = camelizeBody(value, depth + 1);
  return out;
}
