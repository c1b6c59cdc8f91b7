import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * What the leader's ha-node reports about the roles and databases it keeps (the `managed`
 * section of its node document, GET /), and the DatabaseCluster status the operator composes
 * from it. One schema for both sides: the operator parses the answer with it.
 */

export const managedRoleResultSchema = z.object({
  name: z.string(),
  applied: z.boolean(),
  message: z.string().optional().meta({ description: 'Why the role is not as the spec says (e.g. it owns objects and cannot be dropped).' }),
});

export const managedRolesStatusSchema = z
  .array(managedRoleResultSchema)
  .max(256)
  .meta({ description: 'Per role of spec.roles: applied on the current primary, or the error.' });

export const managedDatabaseResultSchema = z.object({
  /** The Database object's uid (a recreated object with the same name is another one). */
  uid: z.string(),
  object: z.string(),
  name: z.string(),
  applied: z.boolean(),
  message: z.string().optional(),
  generation: z.number().int().optional(),
  /** Deleted object, reclaim policy applied (dropped or retained): its finalizer may go. */
  released: z.boolean().optional(),
});

export const managedReportSchema = z.object({
  /** When the leader last compared (ISO time). */
  at: z.string(),
  /** Hash of the roles it compared against (the dynamic configuration's `roles`). */
  rolesHash: z.string(),
  roles: z.array(managedRoleResultSchema),
  databases: z.array(managedDatabaseResultSchema),
  /** Statements the last pass ran (0 when everything already matched). */
  statements: z.number().int(),
  /** The last pass that changed something: when, and how many statements it ran. */
  lastChange: z.object({ at: z.string(), statements: z.number().int() }).optional(),
});

export type ManagedRoleResult = z.infer<typeof managedRoleResultSchema>;
export type ManagedDatabaseResult = z.infer<typeof managedDatabaseResultSchema>;
export type ManagedReport = z.infer<typeof managedReportSchema>;

/** The hash both sides take of spec.roles as the dynamic configuration holds it (absent: none). */
export function managedRolesHash(roles: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(roles ?? []))
    .digest('hex')
    .slice(0, 16);
}
