import type pg from 'pg';
import type { ActualRole } from './role-plan.js';
import type { ActualDatabase, ActualInside } from './database-plan.js';

/** Reads of pg_authid, pg_database, pg_namespace and pg_extension the plans compare against. */

interface RoleRow {
  rolname: string;
  rolsuper: boolean;
  rolinherit: boolean;
  rolcreaterole: boolean;
  rolcreatedb: boolean;
  rolcanlogin: boolean;
  rolreplication: boolean;
  rolbypassrls: boolean;
  rolconnlimit: number;
  validuntil: string | null;
  rolpassword: string | null;
  comment: string | null;
  member_of: string[];
  owned: number;
}

const rolesQuery = `
SELECT r.rolname, r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin, r.rolreplication, r.rolbypassrls, r.rolconnlimit,
  CASE WHEN r.rolvaliduntil IS NULL THEN NULL WHEN r.rolvaliduntil = 'infinity' THEN 'infinity' ELSE extract(epoch FROM r.rolvaliduntil)::text END AS validuntil,
  r.rolpassword, shobj_description(r.oid, 'pg_authid') AS comment,
  ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_authid g ON g.oid = m.roleid WHERE m.member = r.oid ORDER BY 1)::text[] AS member_of,
  (SELECT count(*) FROM pg_shdepend d WHERE d.refclassid = 'pg_authid'::regclass AND d.refobjid = r.oid AND d.deptype = 'o')::int AS owned
FROM pg_authid r WHERE r.rolname = ANY($1::text[])`;

export async function readRoles(client: pg.Client, names: readonly string[]): Promise<Map<string, ActualRole>> {
  const { rows } = await client.query<RoleRow>(rolesQuery, [names]);
  return new Map(
    rows.map((row) => [
      row.rolname,
      {
        name: row.rolname,
        superuser: row.rolsuper,
        inherit: row.rolinherit,
        createrole: row.rolcreaterole,
        createdb: row.rolcreatedb,
        login: row.rolcanlogin,
        replication: row.rolreplication,
        bypassrls: row.rolbypassrls,
        connectionLimit: row.rolconnlimit,
        validUntil: row.validuntil === null ? null : row.validuntil === 'infinity' ? Infinity : Number(row.validuntil),
        password: row.rolpassword,
        comment: row.comment,
        memberOf: row.member_of,
        ownedObjects: row.owned,
      },
    ]),
  );
}

export async function readDatabases(client: pg.Client, names: readonly string[]): Promise<Map<string, ActualDatabase>> {
  const { rows } = await client.query<{ datname: string; owner: string }>(
    'SELECT d.datname, pg_get_userbyid(d.datdba) AS owner FROM pg_database d WHERE d.datname = ANY($1::text[])',
    [names],
  );
  return new Map(rows.map((row) => [row.datname, { name: row.datname, owner: row.owner }]));
}

/** Schemas, installed extensions and the extensions the server could install, inside one database. */
export async function readInside(client: pg.Client): Promise<ActualInside> {
  const schemas = await client.query<{ nspname: string; owner: string }>('SELECT nspname, pg_get_userbyid(nspowner) AS owner FROM pg_namespace');
  const extensions = await client.query<{ extname: string; extversion: string; nspname: string }>(
    'SELECT e.extname, e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace',
  );
  const available = await client.query<{ name: string }>('SELECT name FROM pg_available_extensions');
  return {
    schemas: new Map(schemas.rows.map((r) => [r.nspname, r.owner])),
    extensions: new Map(extensions.rows.map((r) => [r.extname, { version: r.extversion, schema: r.nspname }])),
    available: new Set(available.rows.map((r) => r.name)),
  };
}
