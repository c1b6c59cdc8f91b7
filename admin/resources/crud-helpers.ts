import { z } from 'zod';
import { Code } from '../http/codes.js';
import { BizError } from '../http/envelope.js';
import { quoteIdent, type Fields } from './records.js';
import { pageQuerySchema } from '../http/validate.js';

/** Pure helpers of the generic resource router: search schema, LIKE escaping, ordering, trees. */

export type Row = Record<string, unknown>;

/** The page query plus one optional filter per field that declares one, plus resource extras. */
export function searchSchemaFor(fields: Fields, extra: Record<string, z.ZodType> = {}) {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(fields)) {
    if (!field.filter) continue;
    if (field.filter === 'anyOf') shape[name] = z.array(z.string().max(200)).max(100).nullish();
    else if (field.kind === 'int') shape[name] = z.coerce.number().int().nullish();
    else if (field.kind === 'bool') shape[name] = z.boolean().nullish();
    else shape[name] = z.string().max(200).nullish();
  }
  return pageQuerySchema.extend({ ...shape, ...extra });
}

/** Makes user input literal inside a LIKE pattern. */
export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `-name` → name DESC; only whitelisted fields, so callers cannot sort by arbitrary SQL. */
export function orderClause(orderBy: readonly string[] | null | undefined, fields: Fields, fallback: string): string {
  const parts: string[] = [];
  for (const item of orderBy ?? []) {
    const desc = item.startsWith('-');
    const name = desc ? item.slice(1) : item;
    const field = fields[name];
    if (!field || !(field.orderable || name === 'id')) throw new BizError(Code.VALIDATION, `orderBy: cannot sort by "${name}"`);
    parts.push(`${quoteIdent(field.column)} ${desc ? 'DESC' : 'ASC'}`);
  }
  parts.push(fallback, 'id ASC');
  return parts.join(', ');
}

/** Nests records under their parents (parent 0 or unknown = root), keeping the query's order. */
export function buildTree(rows: Row[], records: Record<string, unknown>[], parentColumn: string): Record<string, unknown>[] {
  const byId = new Map<number, Record<string, unknown>>();
  rows.forEach((row, i) => byId.set(row.id as number, records[i]));
  const roots: Record<string, unknown>[] = [];
  rows.forEach((row, i) => {
    const parent = byId.get(row[parentColumn] as number);
    if (parent && parent !== records[i]) ((parent.children ??= []) as Record<string, unknown>[]).push(records[i]);
    else roots.push(records[i]);
  });
  return roots;
}
