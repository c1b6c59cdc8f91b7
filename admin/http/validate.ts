import { z } from 'zod';
import { camelizeBody } from './case.js';
import { Code } from './codes.js';
import { BizError } from './envelope.js';
import { findUnstorableText } from '../resources/storable-text.js';

/** "field: message; field2: message" from the zod issues, so a client can show one clear line. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ` : '') + issue.message)
    .join('; ');
}

/**
 * Validates a request body (snake_case accepted) and throws BizError 1200 on failure, also for a
 * string PostgreSQL cannot store (NUL, lone surrogate) anywhere in what the schema kept.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const checked = schema.safeParse(camelizeBody(body ?? {}));
  if (!checked.success) throw new BizError(Code.VALIDATION, describeZodError(checked.error));
  refuseUnstorableText(checked.data);
  return checked.data;
}

/** Throws BizError 1200 "field: reason" when a string in value cannot be stored (see storable-text). */
export function refuseUnstorableText(value: unknown, field = ''): void {
  const found = findUnstorableText(value);
  if (!found) return;
  const path = [field, found.path].filter(Boolean).join('.');
  throw new BizError(Code.VALIDATION, `${path || 'body'}: ${found.reason}`);
}

/** Page query (PageQueryBase): current ≥ 1 (default 1), size 1–1000 (default 10), orderBy list or null. */
export const pageQuerySchema = z.object({
  current: z.coerce.number().int().min(1).default(1),
  size: z.coerce.number().int().min(1).max(1000).default(10),
  orderBy: z.array(z.string().min(1).max(64)).max(10).nullish().default(null),
});

export type PageQuery = z.output<typeof pageQuerySchema>;

/** Enable/disable status: '1' enable, '2' disable; the words are accepted as aliases on input. */
export const statusSchema = z
  .union([z.literal('1'), z.literal('2'), z.literal('3'), z.literal('enable'), z.literal('disable')])
  .transform((v) => (v === 'enable' ? '1' : v === 'disable' ? '2' : v));

export const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => (v === '' ? null : v));
