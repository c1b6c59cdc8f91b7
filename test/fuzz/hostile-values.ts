import type { Random } from './random.js';

/**
 * Hostile ingredients shared by every target: strings, JSON values and raw bodies that a careless
 * script or an attacker sends (wrong types, NUL and lone surrogates, huge numbers, prototype keys,
 * deep nesting, invalid JSON, large bodies).
 */

export const oddStrings: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '%00',
  '../../etc/passwd',
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '${jndi:ldap://127.0.0.1/a}',
  '<script>alert(1)</script>',
  '\r\nX-Injected: 1',
  '🦀'.repeat(10),
  'é'.normalize('NFD'),
  '1e309',
  'NaN',
  'true',
  'null',
  '-1',
  '0x10',
  '__proto__',
  'constructor',
];

export const oddNumbers: readonly number[] = [0, -1, -0, 1.5, 2 ** 31, 2 ** 31 - 1, -(2 ** 31), 2 ** 53, 2 ** 53 + 2, 1e21, 1e-7, Number.MAX_VALUE];

/** A random scalar: odd strings and numbers, booleans, null, a long string. */
export function hostileScalar(rng: Random): unknown {
  switch (rng.int(7)) {
    case 0:
      return rng.pick(oddStrings);
    case 1:
      return rng.pick(oddNumbers);
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4:
      return rng.text(1 + rng.int(2000), 'ab\u0000\ud800 ~%"\\');
    case 5:
      return rng.text(rng.int(12));
    default:
      return rng.int(100);
  }
}

/** A random JSON value of limited size: scalars, arrays and objects, sometimes with prototype keys. */
export function hostileValue(rng: Random, depth = 0): unknown {
  const roll = depth > 3 ? 0 : rng.int(10);
  if (roll < 6) return hostileScalar(rng);
  if (roll < 8) return Array.from({ length: rng.int(5) }, () => hostileValue(rng, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = rng.int(5); i > 0; i -= 1)
    out[rng.chance(0.1) ? rng.pick(['__proto__', 'constructor', 'prototype']) : rng.text(1 + rng.int(8))] = hostileValue(rng, depth + 1);
  return out;
}

/** JSON text whose own keys may be __proto__ (JSON.stringify of an object cannot write one). */
export function prototypeKeyBody(rng: Random, inner: string): string {
  const key = rng.pick(['__proto__', 'constructor', 'prototype']);
  return key === 'constructor' ? `{"constructor":{"prototype":${inner}}}` : `{"${key}":${inner}}`;
}

/** Nested arrays or objects depth levels deep (as text: building the value could overflow). */
export function deepNesting(rng: Random, depth: number): string {
  if (rng.chance(0.5)) return '['.repeat(depth) + ']'.repeat(depth);
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

export const invalidJson: readonly string[] = [
  '{',
  '}',
  '{"a":',
  '{"a" 1}',
  '[1,2',
  '{"a":1,}',
  "{'a':1}",
  'nul',
  'undefined',
  'NaN',
  '{"a":NaN}',
  '\ufeff{"a":1}',
  '{"a":"\\u00"}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '"\\x41"',
  '\u0000',
  '{"a":1}{"b":2}',
  '--',
  '1e309',
  '[' + '1,'.repeat(100) + ']',
];

/** A large body of bytes (JSON-looking or not), from 64 KiB up to about 3 MiB. */
export function hugeBody(rng: Random): string {
  const size = rng.chance(0.1) ? 3 * 1024 * 1024 : rng.pick([64 * 1024, 130 * 1024, 300 * 1024, 1024 * 1024 + 1]);
  const filler = rng.pick(['a', '0', ' ', '\u00e9']);
  switch (rng.int(3)) {
    case 0:
      return `{"a":"${filler.repeat(size)}"}`;
    case 1:
      return `[${'1,'.repeat(size / 2)}1]`;
    default:
      return filler.repeat(size);
  }
}

/** Percent-encodes text; a lone surrogate becomes the invalid UTF-8 bytes of its code unit. */
export function percentEncode(text: string): string {
  return text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]/g, (unit) => {
    const code = unit.charCodeAt(0);
    if (unit.length === 2 || code < 0xd800 || code > 0xdfff) return encodeURIComponent(unit);
    return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  });
}
