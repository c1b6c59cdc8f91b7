import pg from 'pg';
import type { DatabaseObject, DatabaseObjectSpec } from '../../../api/crd/database-kind.js';

/**
 * Database objects against pg_database, and inside each database its schemas and extensions
 * against pg_namespace, pg_extension and pg_available_extensions: the statements that make the
 * server match, nothing where it already does. Pure; quoting by the pg driver's helpers. Nothing
 * is dropped with CASCADE: a schema or extension something else needs stays, with the reason.
 */

/** What a Database object asks for now: its spec, or its deletion under a reclaim policy. */
export interface DatabaseIntent {
  object: DatabaseObject;
  /** Effective ensure: a deleted object with reclaimPolicy delete is absent; retain leaves it alone. */
  ensure: 'present' | 'absent' | 'untouched';
  /** Why this object is not applied at all (another object manages the same database). */
  conflict?: string;
}

function creationOrder(a: DatabaseObject, b: DatabaseObject): number {
  const at = (o: DatabaseObject) => o.metadata.creationTimestamp ?? '';
  return at(a).localeCompare(at(b)) || a.metadata.name.localeCompare(b.metadata.name);
}

/**
 * One intent per object. Two live objects naming the same database: the older one wins, the
 * newer one is refused with the winner's name (a deleted object no longer claims the name).
 */
export function databaseIntents(objects: readonly DatabaseObject[]): DatabaseIntent[] {
  const owners = new Map<string, string>();
  return [...objects].sort(creationOrder).map((object) => {
    if (object.metadata.deletionTimestamp) {
      return { object, ensure: object.spec.reclaimPolicy === 'delete' ? 'absent' : 'untouched' };
    }
    const claimedBy = owners.get(object.spec.name);
    if (claimedBy) return { object, ensure: 'untouched', conflict: `database "${object.spec.name}" is already managed by Database "${claimedBy}"` };
    owners.set(object.spec.name, object.metadata.name);
    return { object, ensure: object.spec.ensure };
  });
}

export interface ActualDatabase {
  name: string;
  owner: string;
}

/** Statements run from the maintenance database: create, change the owner, or drop. */
export function planDatabase(spec: DatabaseObjectSpec, ensure: 'present' | 'absent', actual: ActualDatabase | undefined): string[] {
  const name = pg.escapeIdentifier(spec.name);
  if (ensure === 'absent') return actual ? [`DROP DATABASE ${name}`] : [];
  if (!actual) {
    const options = [
      `OWNER ${pg.escapeIdentifier(spec.owner)}`,
      spec.template ? `TEMPLATE ${pg.escapeIdentifier(spec.template)}` : '',
      spec.encoding ? `ENCODING ${pg.escapeLiteral(spec.encoding)}` : '',
      spec.locale ? `LOCALE ${pg.escapeLiteral(spec.locale)}` : '',
    ].filter(Boolean);
    return [`CREATE DATABASE ${name} ${options.join(' ')}`];
  }
  return actual.owner === spec.owner ? [] : [`ALTER DATABASE ${name} OWNER TO ${pg.escapeIdentifier(spec.owner)}`];
}

/** What one database holds, as far as the plan compares. */
export interface ActualInside {
  schemas: Map<string, string>;
  /** Installed extensions: version and schema. */
  extensions: Map<string, { version: string; schema: string }>;
  /** Extensions the server has files for (pg_available_extensions). */
  available: Set<string>;
}

export interface InsidePlan {
  statements: string[];
  problems: string[];
}

/** Schemas first (an extension may go into one), then extensions. */
export function planInside(spec: DatabaseObjectSpec, actual: ActualInside): InsidePlan {
  const statements: string[] = [];
  const problems: string[] = [];
  for (const schema of spec.schemas) {
    const name = pg.escapeIdentifier(schema.name);
    const owner = schema.owner ?? spec.owner;
    const current = actual.schemas.get(schema.name);
    if (schema.ensure === 'absent') {
      if (current !== undefined) statements.push(`DROP SCHEMA ${name}`);
    } else if (current === undefined) statements.push(`CREATE SCHEMA ${name} AUTHORIZATION ${pg.escapeIdentifier(owner)}`);
    else if (current !== owner) statements.push(`ALTER SCHEMA ${name} OWNER TO ${pg.escapeIdentifier(owner)}`);
  }
  for (const extension of spec.extensions) {
    const name = pg.escapeIdentifier(extension.name);
    const current = actual.extensions.get(extension.name);
    if (extension.ensure === 'absent') {
      if (current) statements.push(`DROP EXTENSION ${name}`);
      continue;
    }
    if (!current) {
      if (!actual.available.has(extension.name)) {
        problems.push(`extension "${extension.name}" is not available on the server (not in pg_available_extensions)`);
        continue;
      }
      const schema = extension.schema ? ` SCHEMA ${pg.escapeIdentifier(extension.schema)}` : '';
      const version = extension.version ? ` VERSION ${pg.escapeLiteral(extension.version)}` : '';
      statements.push(`CREATE EXTENSION ${name}${schema}${version}`);
      continue;
    }
    if (extension.version && extension.version !== current.version) statements.push(`ALTER EXTENSION ${name} UPDATE TO ${pg.escapeLiteral(extension.version)}`);
    if (extension.schema && extension.schema !== current.schema) statements.push(`ALTER EXTENSION ${name} SET SCHEMA ${pg.escapeIdentifier(extension.schema)}`);
  }
  return { statements, problems };
}
