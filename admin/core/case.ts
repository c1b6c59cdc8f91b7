/** snake_case → camelCase for one key; camelCase keys pass through unchanged. */
export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** camelCase → snake_case for one key (column names). */
export function snakeKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Request bodies accept snake_case and camelCase: top-level keys of plain objects are turned into
 * camelCase. When both spellings are sent the camelCase one wins.
 */
export function camelizeBody(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = {};
  const entries = Object.entries(body as Record<string, unknown>);
  for (const [key, value] of entries) if (key.includes('_')) out[camelKey(key)] = value;
  for (const [key, value] of entries) if (!key.includes('_')) out[key] = value;
  return out;
}
