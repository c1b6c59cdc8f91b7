import { Code } from '../http/codes.js';
import type { IdCodec } from './ids.js';
import { fmtNameOf, idValue, quoteIdent, type Fields } from './records.js';

/**
 * Search pages whose records PostgreSQL renders as JSON text (ADR 0208). The admin process then
 * splices that text into the envelope instead of parsing some twenty columns per row, mapping them
 * to a record object and serialising it again: a third less CPU per search in the admin process,
 * whose single event loop is what limits throughput, for some more in PostgreSQL.
 *
 * The records are the ones `recordMapper` makes (records.ts), key for key; only the key order
 * differs. Per row the query (`jsonRecords`) returns, in this order:
 * - each shown `id` field's column: Node encodes it as a sqid (0 stays 0, anything else null);
 * - one text column holding the time fields as a JSON fragment, `"name":<ms>,"fmtName":"…"`, the
 *   fmt key left out when the time is null or ±infinity (then `"name":null`), as the mapper does;
 * - `row_to_json` of every other shown field and of the computed (json) fields, camelCase keys.
 */
export interface JsonRecords {
  /** The select list for `SELECT <select> FROM <table> …`, read with rowMode 'array'. */
  select: string;
  /** How many columns the select list has (a caller may append more after them). */
  columnCount: number;
  /** Turns one row of that select into the record's JSON text. */
  write(row: readonly unknown[]): string;
}

const fieldName = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkedName(name: string): string {
  if (!fieldName.test(name)) throw new Error(`field name ${JSON.stringify(name)} cannot be rendered as a JSON key by SQL`);
  return name;
}

/** A JSON fragment `"name":` as an SQL string literal (names are checked to need no escaping). */
const keyLiteral = (name: string): string => `'"${checkedName(name)}":'`;

/** Milliseconds and display text of one time column, as `recordMapper` gives them. */
function timeFragment(name: string, column: string): string {
  const fmtName = fmtNameOf(name);
  // date_trunc first: the epoch is then a whole number of milliseconds, so the cast's rounding of
  // the double is exact (to within 1e-4 ms up to year ~280000), and truncating below a millisecond
  // is what a Date does. date_part's double is cheaper than extract's numeric.
  const ms = `(date_part('epoch', date_trunc('milliseconds', ${column})) * 1000)::int8`;
  const text = `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;
  return `CASE WHEN isfinite(${column}) THEN ${keyLiteral(name)} || ${ms} || ',"${checkedName(fmtName)}":"' || ${text} || '"' ELSE ${keyLiteral(name)} || 'null' END`;
}

/**
 * The select list rendering `fields` (plus `computed`: name → SQL expression of type json) of
 * rows of `table` (already quoted by the caller), and the writer of its rows: one column layout.
 */
export function jsonRecords(table: string, fields: Fields, ids: IdCodec, computed: Record<string, string> = {}): JsonRecords {
  const shown = Object.entries(fields).filter(([, field]) => field.output !== false);
  const column = (name: string): string => `${table}.${quoteIdent(name)}`;
  const idFields = shown.filter(([, field]) => field.kind === 'id');
  const times = shown.filter(([, field]) => field.kind === 'time').map(([name, field]) => timeFragment(name, column(field.column)));
  const others = shown
    .filter(([, field]) => field.kind !== 'id' && field.kind !== 'time')
    .map(([name, field]) => `${column(field.column)} AS ${quoteIdent(checkedName(name))}`)
    .concat(Object.entries(computed).map(([name, expression]) => `(${expression}) AS ${quoteIdent(checkedName(name))}`));
  const select = [
    ...idFields.map(([, field]) => column(field.column)),
    times.length ? times.join(` || ',' || `) : `''`,
    others.length ? `(SELECT row_to_json(__r)::text FROM (SELECT ${others.join(', ')}) __r)` : `'{}'`,
  ];
  const idKeys = idFields.map(([name]) => `"${checkedName(name)}":`);
  const idRootAsNull = idFields.map(([, field]) => field.rootAsNull === true);
  const timesAt = idKeys.length;
  const objectAt = timesAt + 1;
  return {
    select: select.join(', '),
    columnCount: select.length,
    write(row) {
      let text = '{';
      for (let i = 0; i < idKeys.length; i++) text += `${i ? ',' : ''}${idKeys[i]}${JSON.stringify(idValue(row[i], ids, idRootAsNull[i]))}`;
      const times = row[timesAt] as string;
      if (times) text += text.length > 1 ? `,${times}` : times;
      const object = row[objectAt] as string;
      if (object.length > 2) text += text.length > 1 ? `,${object.slice(1)}` : object.slice(1);
      else text += '}';
      return text;
    },
  };
}

/** The envelope of a search page around records already rendered as JSON text. */
export function pageEnvelopeText(records: readonly string[], total: number, current: number, size: number): string {
  // One join copies every piece once into a flat string (nested templates would copy it again).
  const parts: string[] = [`{"code":${JSON.stringify(Code.OK)},"msg":"OK","data":{"records":[`];
  for (let i = 0; i < records.length; i++) parts.push(i ? `,${records[i]}` : records[i]);
  parts.push(`],"total":${total},"current":${current},"size":${size}}}`);
  return parts.join('');
}
