import { z } from 'zod';
import { identifier } from './managed-roles.js';
import { dnsLabel } from './schema-helpers.js';

/**
 * The Database kind (keelson.io/v1, short name kdb): one PostgreSQL database of a DatabaseCluster
 * with its extensions and schemas, kept in place by the cluster's leader (ha-node), which lists
 * these objects itself. Status is written by the operator from what the leader reports. Source of
 * the generated CRD.
 */

export const databaseKind = 'Database';
export const databasePlural = 'databases';
export const databaseSingular = 'database';
export const databaseShortNames = ['kdb'];

/** Databases PostgreSQL or ha-node need for themselves. */
export const reservedDatabaseNames = ['postgres', 'template0', 'template1'] as const;

const databaseName = identifier
  .refine((name) => !(reservedDatabaseNames as readonly string[]).includes(name), {
    message: 'postgres, template0 and template1 are kept by PostgreSQL and ha-node',
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: "!(self in ['postgres', 'template0', 'template1'])", message: 'postgres, template0 and template1 are kept by PostgreSQL and ha-node' },
    ],
  });

/** An extension version as ALTER EXTENSION ... UPDATE TO takes it. */
const extensionVersion = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be an extension version such as 1.2');

const extensionSchema = z
  .object({
    name: identifier.meta({ description: 'Extension name; it must be available on the server (pg_available_extensions), else status says so.' }),
    version: extensionVersion.optional().meta({ description: 'Version to install or update to; the default version when unset.' }),
    schema: identifier.optional().meta({ description: 'Schema the extension is created in (and moved to, when relocatable).' }),
    ensure: z.enum(['present', 'absent']).default('present'),
  })
  .meta({ description: 'One extension of the database.' });

const schemaSchema = z
  .object({
    name: identifier
      .refine((name) => !name.startsWith('pg_'), { message: 'schema names starting with pg_ are reserved' })
      .meta({
        'x-kubernetes-validations': [{ rule: "!self.startsWith('pg_')", message: 'schema names starting with pg_ are reserved' }],
      }),
    owner: identifier.optional().meta({ description: 'Owner role; the database owner when unset.' }),
    ensure: z.enum(['present', 'absent']).default('present').meta({ description: 'absent drops the schema if it is empty (never CASCADE).' }),
  })
  .meta({ description: 'One schema of the database.' });

/** Problems CEL states on the lists too: a name listed twice. */
function duplicateProblems(names: readonly string[], what: string): { index: number; message: string }[] {
  const seen = new Set<string>();
  return names.flatMap((name, index) => {
    const duplicate = seen.has(name);
    seen.add(name);
    return duplicate ? [{ index, message: `duplicate ${what} "${name}"` }] : [];
  });
}

export const databaseObjectSpecSchema = z
  .object({
    cluster: dnsLabel.meta({ description: 'Name of the DatabaseCluster (same namespace). Fixed at creation.' }),
    name: databaseName.meta({ description: 'The PostgreSQL database name. Fixed at creation.' }),
    owner: identifier.meta({ description: 'Owner role (ALTER DATABASE ... OWNER TO when it changes); it must exist, e.g. from spec.roles.' }),
    ensure: z.enum(['present', 'absent']).default('present').meta({ description: 'absent drops the database (it must have no connections).' }),
    encoding: z
      .string()
      .max(32)
      .regex(/^[A-Za-z0-9_]+$/, 'must be an encoding name such as UTF8')
      .optional()
      .meta({ description: "Encoding at creation; the template's when unset. Fixed at creation." }),
    locale: z
      .string()
      .max(64)
      .regex(/^[A-Za-z0-9_.@-]+$/, 'must be a locale name such as C or en_US.UTF-8')
      .optional()
      .meta({ description: 'LC_COLLATE and LC_CTYPE at creation. Fixed at creation.' }),
    template: identifier.optional().meta({ description: 'Template database at creation (template1 when unset). Fixed at creation.' }),
    extensions: z
      .array(extensionSchema)
      .max(64)
      .default([])
      .superRefine((list, ctx) => {
        for (const p of duplicateProblems(
          list.map((e) => e.name),
          'extension',
        ))
          ctx.addIssue({ code: 'custom', path: [p.index, 'name'], message: p.message });
      })
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    schemas: z
      .array(schemaSchema)
      .max(64)
      .default([])
      .superRefine((list, ctx) => {
        for (const p of duplicateProblems(
          list.map((s) => s.name),
          'schema',
        ))
          ctx.addIssue({ code: 'custom', path: [p.index, 'name'], message: p.message });
      })
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    reclaimPolicy: z
      .enum(['retain', 'delete'])
      .default('retain')
      .meta({ description: 'What deleting this object does: retain leaves the database, delete drops it.' }),
  })
  .meta({
    description: 'A database of a DatabaseCluster, applied by its leader.',
    'x-kubernetes-validations': [
      { rule: 'self.cluster == oldSelf.cluster && self.name == oldSelf.name', message: 'spec.cluster and spec.name cannot change after creation' },
      {
        rule: 'has(self.encoding) == has(oldSelf.encoding) && (!has(self.encoding) || self.encoding == oldSelf.encoding) && has(self.locale) == has(oldSelf.locale) && (!has(self.locale) || self.locale == oldSelf.locale) && has(self.template) == has(oldSelf.template) && (!has(self.template) || self.template == oldSelf.template)',
        message: 'spec.encoding, spec.locale and spec.template are fixed at creation',
      },
    ],
  });

export const databaseObjectStatusSchema = z
  .object({
    applied: z.boolean().optional().meta({ description: 'The database is as the spec says on the current primary.' }),
    message: z.string().optional().meta({ description: 'Why not (the error PostgreSQL or the leader gave).' }),
    observedGeneration: z.number().int().optional(),
  })
  .meta({ description: 'Observed state, written by the operator only.' });

export type DatabaseObjectSpec = z.infer<typeof databaseObjectSpecSchema>;
export type DatabaseObjectStatus = z.infer<typeof databaseObjectStatusSchema>;

/** A Database as ha-node and the operator handle it (spec parsed, status as stored). */
export interface DatabaseObject {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
  spec: DatabaseObjectSpec;
  status?: DatabaseObjectStatus;
}

/** Finalizer the operator puts on every Database so a delete policy runs before the object goes. */
export const databaseFinalizer = 'keelson.io/database';

/** A raw object from the API server as a DatabaseObject, or the problem with it (named by field). */
export function parseDatabaseObject(raw: unknown): { ok: true; value: DatabaseObject } | { ok: false; name?: string; message: string } {
  const object = (typeof raw === 'object' && raw !== null ? raw : {}) as { metadata?: Partial<DatabaseObject['metadata']>; spec?: unknown; status?: unknown };
  const metadata = object.metadata ?? {};
  if (!metadata.name || !metadata.namespace || !metadata.uid) return { ok: false, message: 'metadata.name, namespace and uid are required' };
  const spec = databaseObjectSpecSchema.safeParse(object.spec ?? {});
  if (!spec.success) {
    const issue = spec.error.issues[0]!;
    return { ok: false, name: metadata.name, message: `spec.${issue.path.map(String).join('.')}: ${issue.message}` };
  }
  const status = databaseObjectStatusSchema.safeParse(object.status ?? {});
  const creation = metadata.creationTimestamp as unknown;
  const deletion = metadata.deletionTimestamp as unknown;
  return {
    ok: true,
    value: {
      metadata: {
        ...(metadata as DatabaseObject['metadata']),
        creationTimestamp: creation instanceof Date ? creation.toISOString() : (creation as string | undefined),
        deletionTimestamp: deletion instanceof Date ? deletion.toISOString() : (deletion as string | undefined),
      },
      spec: spec.data,
      status: status.success ? status.data : {},
    },
  };
}
