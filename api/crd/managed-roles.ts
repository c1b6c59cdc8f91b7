import { z } from 'zod';

/**
 * Declarative PostgreSQL roles (DatabaseCluster spec.roles): the leader's ha-node makes the
 * server's roles match this list, changing only what differs. The schema is the one contract:
 * the CRD is generated from it, the operator parses with it, and ha-node checks the copy it finds
 * in its dynamic configuration with it again (a hand-edited DCS must not reach PostgreSQL).
 */

/** PostgreSQL's NAMEDATALEN - 1: longer identifiers are truncated silently, so they are refused. */
export const maxIdentifierBytes = 63;

/**
 * Names Keelson accepts for roles, databases, schemas and extensions: ASCII (so characters are
 * bytes and the CRD's maxLength is PostgreSQL's byte limit), starting with a letter or "_".
 * Anything else PostgreSQL would accept only quoted is still quoted when it reaches SQL.
 */
export const identifierPattern = '^[A-Za-z_][A-Za-z0-9_$-]*$';

export const identifier = z
  .string()
  .min(1)
  .max(maxIdentifierBytes, `must be at most ${maxIdentifierBytes} bytes (PostgreSQL truncates longer names)`)
  .regex(new RegExp(identifierPattern), 'must be an identifier: ASCII letters, digits, "_", "$" or "-", starting with a letter or "_"');

/** Role names PostgreSQL reserves or Keelson uses itself (superuser, replication, pooler). */
export const reservedRoleNames = ['postgres', 'replicator', 'keelson_pooler', 'public', 'none', 'current_user', 'session_user', 'current_role'] as const;

/** The problem with a role name beyond its syntax (reserved, pg_ prefix), or undefined. */
export function reservedRoleProblem(name: string): string | undefined {
  if (name.startsWith('pg_')) return `role name "${name}" is reserved: the prefix pg_ belongs to PostgreSQL`;
  if ((reservedRoleNames as readonly string[]).includes(name.toLowerCase())) return `role name "${name}" is reserved (PostgreSQL or Keelson uses it)`;
  return undefined;
}

const reservedRule = `!self.startsWith('pg_') && !(self.lowerAscii() in [${reservedRoleNames.map((n) => `'${n}'`).join(', ')}])`;

/** A role name: an identifier that is not reserved (CEL for the API server, refine for everyone else). */
export const roleName = identifier
  .refine((name) => !reservedRoleProblem(name), { error: (issue) => reservedRoleProblem(String(issue.input)) ?? 'reserved role name' })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: reservedRule,
        message:
          'reserved role name: postgres, replicator, keelson_pooler, public, none, current_user, session_user, current_role and pg_* belong to PostgreSQL or Keelson',
      },
    ],
  });

/** PostgreSQL's connection limit: -1 (none) or a count that fits an int4. */
const connectionLimit = z.number().int().min(-1).max(2_147_483_647);

/**
 * An RFC 3339 timestamp with a zone (what PostgreSQL's timestamptz input and every API server
 * accept alike), or "infinity". Checked as a real date: "2026-02-30T00:00:00Z" is refused.
 */
export const validUntilPattern = '^(infinity|\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?(Z|[+-]\\d{2}:\\d{2}))$';

export function validUntilProblem(value: string): string | undefined {
  if (!new RegExp(validUntilPattern).test(value)) return 'must be "infinity" or an RFC 3339 timestamp with a zone, such as 2027-01-01T00:00:00Z';
  if (value === 'infinity') return undefined;
  const [date] = value.split('T');
  const parsed = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date) return `"${value}" is not a calendar date`;
  const [, time] = value.split('T');
  const [hours, minutes, seconds] = time!.slice(0, 8).split(':').map(Number);
  if (hours! > 23 || minutes! > 59 || seconds! > 59) return `"${value}" is not a time of day`;
  return undefined;
}

const validUntil = z
  .string()
  .max(40)
  .refine((value) => !validUntilProblem(value), { error: (issue) => validUntilProblem(String(issue.input)) ?? 'invalid timestamp' })
  .meta({ pattern: validUntilPattern });

export const maxManagedRoles = 256;

export const managedRoleSchema = z
  .object({
    name: roleName.meta({ description: 'Role name (at most 63 bytes; postgres, replicator, keelson_pooler, pg_* and the bootstrap owner are refused).' }),
    ensure: z.enum(['present', 'absent']).default('present').meta({ description: 'absent drops the role, unless it owns objects (then status says so).' }),
    comment: z.string().max(1024).optional().meta({ description: 'COMMENT ON ROLE.' }),
    login: z.boolean().default(false),
    superuser: z.boolean().default(false),
    createdb: z.boolean().default(false),
    createrole: z.boolean().default(false),
    inherit: z.boolean().default(true),
    replication: z.boolean().default(false),
    bypassrls: z.boolean().default(false),
    connectionLimit: connectionLimit.default(-1).meta({ description: 'CONNECTION LIMIT: -1 for none.' }),
    validUntil: validUntil.optional().meta({ description: 'VALID UNTIL: when the password stops working (RFC 3339, or "infinity").' }),
    inRoles: z
      .array(identifier)
      .max(64)
      .default([])
      .meta({ description: 'Roles this role is a member of (GRANT ... TO); memberships not listed are revoked.', 'x-kubernetes-list-type': 'set' }),
    passwordSecret: z
      .object({
        name: z
          .string()
          .min(1)
          .max(253)
          .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Secret name'),
      })
      .optional()
      .meta({
        description:
          'A kubernetes.io/basic-auth Secret (keys username, password) in the namespace; its password is kept in sync within seconds. Unset: the role has no password.',
      }),
  })
  .meta({
    description: 'One PostgreSQL role.',
    'x-kubernetes-validations': [{ rule: '!self.superuser || has(self.passwordSecret)', message: 'a superuser role needs passwordSecret' }],
  });

export type ManagedRole = z.infer<typeof managedRoleSchema>;

/** Problems spanning roles (also CEL or list-map keys in the CRD): duplicates, a superuser without a Secret. */
export function managedRolesProblems(roles: readonly ManagedRole[], bootstrapOwner?: string): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const seen = new Set<string>();
  roles.forEach((role, index) => {
    if (seen.has(role.name)) problems.push({ path: [index, 'name'], message: `duplicate role "${role.name}"` });
    seen.add(role.name);
    if (role.superuser && !role.passwordSecret) problems.push({ path: [index, 'passwordSecret'], message: 'a superuser role needs passwordSecret' });
    if (bootstrapOwner !== undefined && role.name === bootstrapOwner)
      problems.push({ path: [index, 'name'], message: `"${role.name}" is the bootstrap owner, kept by ha-node from the <cluster>-app Secret` });
  });
  return problems;
}

/** The list as ha-node's dynamic configuration carries it: absent stays absent (no default). */
export const managedRolesListSchema = z
  .array(managedRoleSchema)
  .max(maxManagedRoles)
  .superRefine((roles, ctx) => {
    for (const problem of managedRolesProblems(roles)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });

export const managedRolesSchema = z
  .array(managedRoleSchema)
  .max(maxManagedRoles)
  .default([])
  .superRefine((roles, ctx) => {
    for (const problem of managedRolesProblems(roles)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .meta({
    description:
      'PostgreSQL roles the leader keeps in place (attributes, memberships, password from a Secret, comment); removed from the list, a role is left as it is (ensure: absent drops it).',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
  });

/** The spec rule that spans roles and bootstrap: the bootstrap owner keeps its own Secret. */
export const bootstrapOwnerRule = {
  rule: '!has(self.roles) || !self.roles.exists(r, r.name == self.bootstrap.owner)',
  message: 'roles: the bootstrap owner is kept by ha-node from the <cluster>-app Secret and cannot be listed in roles',
};
