import { parseTimestamptz, utcTimestampParts } from '../db/timestamps.js';
import type { IdCodec } from './ids.js';

/** "YYYY-MM-DD HH:mm:ss" in UTC, the fmt* fields the front end shows. */
export function formatTime(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 19);
}

/** How a column is shown: `int` is a 32-bit integer column, `time` a timestamptz, `id` an integer shown as a sqid. */
export type FieldKind = 'text' | 'int' | 'bool' | 'id' | 'json' | 'time' | 'textArray';

export interface FieldDef {
  /** SQL column; quoted when emitted. */
  column: string;
  kind: FieldKind;
  /** Shown in records (default true). */
  output?: boolean;
  /** Search filter applied when the field is present in a search body. */
  filter?: 'contains' | 'eq' | 'anyOf';
  orderable?: boolean;
  /** Accepted on create/update (default true except id and audit columns). */
  writable?: boolean;
  /** An id field whose 0 (a root's parent) is shown as null. */
  rootAsNull?: boolean;
}

export type Fields = Record<string, FieldDef>;

/** Audit times every table has; shown as createdAt, updatedAt plus fmt* strings. */
export const auditFields: Fields = {
  createdAt: { column: 'created_at', kind: 'time', writable: false, orderable: true },
  updatedAt: { column: 'updated_at', kind: 'time', writable: false, orderable: true },
};

/**
 * createdBy and updatedBy as the acting users' names (what the list pages show), from the user ids
 * every table keeps in created_by / updated_by: SQL expressions of type json for a resource's
 * computed fields. A user deleted since, or a seeded row, gives null.
 */
export function actorNameFields(table: string): Record<string, string> {
  const name = (column: string): string => `to_json((SELECT u.user_name FROM users u WHERE u.id = ${table}.${quoteIdent(column)}))`;
  return { createdBy: name('created_by'), updatedBy: name('updated_by') };
}

/** The display-text key of a time field: lastLogin → fmtLastLogin. */
export function fmtNameOf(name: string): string {
  return `fmt${name[0].toUpperCase()}${name.slice(1)}`;
}

/** How an id column is shown: a sqid, except that 0 stays 0; anything else (null) is null. */
export function idValue(value: unknown, ids: IdCodec, rootAsNull = false): string | 0 | null {
  return typeof value === 'number' && value > 0 ? ids.encode(value) : value === 0 && !rootAsNull ? 0 : null;
}

/** Converts one database row to a camelCase record: ids become sqids (0 and null stay), times ms (from a Date or timestamptz text). */
export function toRecord(row: Record<string, unknown>, fields: Fields, ids: IdCodec): Record<string, unknown> {
  return recordMapper(fields, ids)(row);
}

/**
 * The row → record conversion of `toRecord` with the field list worked out once, for converting
 * many rows (search pages): which fields are shown, their columns and the fmt* names of times.
 */
export function recordMapper(fields: Fields, ids: IdCodec): (row: Record<string, unknown>) => Record<string, unknown> {
  const shown = Object.entries(fields)
    .filter(([, field]) => field.output !== false)
    .map(([name, field]) => ({ name, column: field.column, kind: field.kind, fmtName: fmtNameOf(name), rootAsNull: field.rootAsNull === true }));
  return (row) => {
    const record: Record<string, unknown> = {};
    for (const { name, column, kind, fmtName, rootAsNull } of shown) {
      const value = row[column];
      if (kind === 'id') record[name] = idValue(value, ids, rootAsNull);
      else if (kind === 'time') {
        // Reads hand over PostgreSQL's text (db/timestamps.ts); rows returned by writes carry Dates.
        const parts = typeof value === 'string' ? utcTimestampParts(value) : undefined;
        if (parts) {
          record[name] = parts.ms;
          record[fmtName] = parts.text;
          continue;
        }
        const date = typeof value === 'string' ? parseTimestamptz(value) : value;
        record[name] = date instanceof Date ? date.getTime() : null;
        if (date instanceof Date) record[fmtName] = formatTime(date);
      } else record[name] = value ?? null;
    }
    return record;
  };
}

/** The columns a read needs: every shown field's column (hidden ones, such as password hashes, stay in the database). */
export function readColumns(fields: Fields): string[] {
  return [
    ...new Set(
      Object.values(fields)
        .filter((field) => field.output !== false)
        .map((field) => field.column),
    ),
  ];
}

/** Converts validated camelCase input to column values; id fields are decoded from sqids. */
export function toColumns(input: Record<string, unknown>, fields: Fields, ids: IdCodec): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    const field = fields[name];
    if (!field || field.writable === false || name === 'id' || value === undefined) continue;
    if (field.kind === 'id')
      columns[field.column] =
        value === null || value === 0 || value === '' || value === '0' ? (field.column.endsWith('parent_id') ? 0 : null) : ids.decode(value, name);
    else if (field.kind === 'json') columns[field.column] = value === null ? null : JSON.stringify(value);
    else columns[field.column] = value;
  }
  return columns;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
