import pg from 'pg';
import type { ManagedRole } from '../../../api/crd/managed-roles.js';
import { scramVerifier, verifierMatches } from '../postgres/scram.js';

/**
 * Desired roles (spec.roles) against pg_authid: the statements that turn one into the other,
 * per role, and nothing for a role that already matches. Pure: the caller reads the catalogs and
 * runs the statements. Identifiers and literals are quoted by the pg driver's helpers; passwords
 * travel only as SCRAM verifiers.
 */

/** One row of pg_authid with what the plan compares. */
export interface ActualRole {
  name: string;
  superuser: boolean;
  inherit: boolean;
  createrole: boolean;
  createdb: boolean;
  login: boolean;
  replication: boolean;
  bypassrls: boolean;
  connectionLimit: number;
  /** rolvaliduntil as epoch seconds; null: none (Infinity: 'infinity'). */
  validUntil: number | null;
  /** rolpassword (a verifier) or null. */
  password: string | null;
  comment: string | null;
  memberOf: string[];
  /** Objects the role owns in any database (pg_shdepend owner entries). */
  ownedObjects: number;
}

/** What the role's Secret gave: the password, or why there is none to use. */
export type SecretPassword = { password: string } | { problem: string };

export interface RolePlan {
  name: string;
  statements: string[];
  /** Why the role cannot be made as the spec says (nothing is run for it then, or only part). */
  problem?: string;
}

const attributes = [
  ['superuser', 'SUPERUSER'],
  ['inherit', 'INHERIT'],
  ['createrole', 'CREATEROLE'],
  ['createdb', 'CREATEDB'],
  ['login', 'LOGIN'],
  ['replication', 'REPLICATION'],
  ['bypassrls', 'BYPASSRLS'],
] as const;

function attributeClause(role: ManagedRole, keyword: string, key: (typeof attributes)[number][0]): string {
  return role[key] ? keyword : `NO${keyword}`;
}

/** validUntil as epoch seconds (null: none). The schema checked the form already. */
export function validUntilSeconds(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (value === 'infinity') return Infinity;
  return Date.parse(value) / 1000;
}

function sameValidUntil(desired: number | null, actual: number | null): boolean {
  const none = (v: number | null) => v === null || v === Infinity;
  if (none(desired) || none(actual)) return none(desired) && none(actual);
  return Math.abs(desired! - actual!) < 0.000001;
}

function validUntilClause(value: string | undefined): string {
  return ` VALID UNTIL ${pg.escapeLiteral(value ?? 'infinity')}`;
}

/** The password clause when the Secret gave one that the stored verifier does not match. */
function passwordClause(desired: SecretPassword | undefined, stored: string | null): string {
  if (!desired || !('password' in desired)) return '';
  if (verifierMatches(stored, desired.password)) return '';
  return ` PASSWORD ${pg.escapeLiteral(scramVerifier(desired.password))}`;
}

function membershipStatements(role: ManagedRole, actual: readonly string[]): string[] {
  const name = pg.escapeIdentifier(role.name);
  const grants = role.inRoles.filter((r) => !actual.includes(r)).map((r) => `GRANT ${pg.escapeIdentifier(r)} TO ${name}`);
  const revokes = actual.filter((r) => !role.inRoles.includes(r)).map((r) => `REVOKE ${pg.escapeIdentifier(r)} FROM ${name}`);
  return [...grants, ...revokes];
}

function commentStatement(role: ManagedRole, actual: string | null): string[] {
  if (role.comment === undefined || role.comment === actual) return [];
  return [`COMMENT ON ROLE ${pg.escapeIdentifier(role.name)} IS ${pg.escapeLiteral(role.comment)}`];
}

function createStatements(role: ManagedRole, password: SecretPassword | undefined): string[] {
  const clauses = attributes.map(([key, keyword]) => attributeClause(role, keyword, key));
  const create = `CREATE ROLE ${pg.escapeIdentifier(role.name)} WITH ${clauses.join(' ')} CONNECTION LIMIT ${role.connectionLimit}${role.validUntil ? validUntilClause(role.validUntil) : ''}${passwordClause(password, null)}`;
  return [create, ...membershipStatements(role, []), ...commentStatement(role, null)];
}

function alterStatements(role: ManagedRole, actual: ActualRole, password: SecretPassword | undefined): string[] {
  const clauses: string[] = attributes.filter(([key]) => role[key] !== actual[key]).map(([key, keyword]) => attributeClause(role, keyword, key));
  if (role.connectionLimit !== actual.connectionLimit) clauses.push(`CONNECTION LIMIT ${role.connectionLimit}`);
  if (!sameValidUntil(validUntilSeconds(role.validUntil), actual.validUntil)) clauses.push(validUntilClause(role.validUntil).trim());
  const alter = clauses.length > 0 ? [`ALTER ROLE ${pg.escapeIdentifier(role.name)} WITH ${clauses.join(' ')}`] : [];
  const passwordChange = passwordClause(password, actual.password);
  const setPassword = passwordChange ? [`ALTER ROLE ${pg.escapeIdentifier(role.name)} WITH${passwordChange}`] : [];
  return [...alter, ...setPassword, ...membershipStatements(role, actual.memberOf), ...commentStatement(role, actual.comment)];
}

/** The plan of one role: create, alter, drop or nothing; a role owning objects is never dropped. */
export function planRole(role: ManagedRole, actual: ActualRole | undefined, password: SecretPassword | undefined): RolePlan {
  const secretProblem = password && 'problem' in password ? password.problem : undefined;
  if (role.ensure === 'absent') {
    if (!actual) return { name: role.name, statements: [] };
    if (actual.ownedObjects > 0) {
      return {
        name: role.name,
        statements: [],
        problem: `role "${role.name}" cannot be dropped because some objects depend on it (it owns ${actual.ownedObjects}); reassign or drop them first`,
      };
    }
    return { name: role.name, statements: [`DROP ROLE ${pg.escapeIdentifier(role.name)}`] };
  }
  const statements = actual ? alterStatements(role, actual, password) : createStatements(role, password);
  return secretProblem ? { name: role.name, statements, problem: secretProblem } : { name: role.name, statements };
}

/** Plans every role, in the spec's order, with roles that others join created first. */
export function planRoles(roles: readonly ManagedRole[], actual: ReadonlyMap<string, ActualRole>, passwords: ReadonlyMap<string, SecretPassword>): RolePlan[] {
  const joined = new Set(roles.flatMap((r) => r.inRoles));
  const ordered = [...roles.filter((r) => joined.has(r.name)), ...roles.filter((r) => !joined.has(r.name))];
  return ordered.map((role) => planRole(role, actual.get(role.name), passwords.get(role.name)));
}
