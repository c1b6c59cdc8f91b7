import pg from 'pg';

/** PostgreSQL's type id of timestamptz. */
const TIMESTAMPTZ = 1184;
const defaultTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

/**
 * Query types that leave timestamptz values as PostgreSQL's text, for reads whose rows are only
 * turned into records: the record needs epoch ms and "YYYY-MM-DD HH:mm:ss", both cheaper to take
 * from the text than through a Date (ADR 0206). Every other type parses as usual.
 */
const asText = (text: string): string => text;
export const textTimestamps: pg.CustomTypesConfig = {
  // pg asks for every column's parser on every query (pg/lib/result.js addFields): hand out one function.
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ && format !== 'binary' ? asText : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

const digits = (text: string, start: number, length: number): number => {
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    value = value * 10 + d;
  }
  return value;
};

export interface TimeParts {
  /** Epoch milliseconds (fractions below 1 ms dropped, as a Date does). */
  ms: number;
  /** "YYYY-MM-DD HH:mm:ss" in UTC. */
  text: string;
}

/**
 * Epoch ms and UTC display text of a timestamptz in PostgreSQL's ISO output at UTC, the admin
 * session's zone: "2026-11-22 22:57:01.123456+00". Any other shape (another zone, BC, infinity)
 * gives undefined; the caller then parses it with pg's own parser (parseTimestamptz).
 */
export function utcTimestampParts(text: string): TimeParts | undefined {
  const n = text.length;
  const utc = n >= 22 && text.charCodeAt(n - 3) === 43 && text.charCodeAt(n - 2) === 48 && text.charCodeAt(n - 1) === 48;
  if (!utc || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58)
    return undefined;
  let fraction = 0;
  if (n > 22) {
    if (text.charCodeAt(19) !== 46 || n === 23) return undefined;
    // Milliseconds are the first three fraction digits; further digits are dropped.
    for (let i = 20, scale = 100; i < n - 3; i++, scale /= 10) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return undefined;
      if (scale >= 1) fraction += d * scale;
    }
  }
  const year = digits(text, 0, 4);
  const ms = Date.UTC(year, digits(text, 5, 2) - 1, digits(text, 8, 2), digits(text, 11, 2), digits(text, 14, 2), digits(text, 17, 2)) + fraction;
  return year >= 1000 && Number.isFinite(ms) ? { ms, text: text.slice(0, 19) } : undefined;
}

/** pg's usual timestamptz parsing (a Date, or ±Infinity for PostgreSQL's infinity). */
export function parseTimestamptz(text: string): unknown {
  return defaultTimestamptz(text);
}
