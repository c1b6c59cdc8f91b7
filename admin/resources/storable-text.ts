/**
 * Strings PostgreSQL cannot store as sent: text and jsonb refuse U+0000 (the statement fails, which
 * would surface as an internal error), and the driver encodes a lone UTF-16 surrogate as U+FFFD,
 * so the stored value would silently differ from the one sent. Request input is checked for both
 * before any statement runs.
 */

// A high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored, or undefined when it can. */
export function unstorableReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain a NUL (U+0000) character';
  if (loneSurrogate.test(text)) return 'must not contain a lone UTF-16 surrogate';
  return undefined;
}

export interface UnstorableText {
  /** Dotted path of the offending value ("" for the input itself), as zod names fields. */
  path: string;
  reason: string;
}

/**
 * The first string (object keys included) in a parsed JSON value that PostgreSQL cannot store.
 * Walks with an explicit stack, so a deeply nested value cannot overflow the call stack.
 */
export function findUnstorableText(value: unknown): UnstorableText | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  while (stack.length > 0) {
    const next = stack.pop() as { value: unknown; path: string };
    const join = (key: string | number): string => (next.path === '' ? String(key) : `${next.path}.${key}`);
    if (typeof next.value === 'string') {
      const reason = unstorableReason(next.value);
      if (reason) return { path: next.path, reason };
    } else if (Array.isArray(next.value)) {
      for (let i = next.value.length - 1; i >= 0; i -= 1) stack.push({ value: next.value[i], path: join(i) });
    } else if (next.value !== null && typeof next.value === 'object') {
      const entries = Object.entries(next.value as Record<string, unknown>).reverse();
      for (const [key, item] of entries) {
        const reason = unstorableReason(key);
        if (reason) return { path: next.path, reason: `a key ${reason}` };
        stack.push({ value: item, path: join(key) });
      }
    }
  }
  return undefined;
}
