import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { Logger } from '../../../lib/log.js';
import { RoleNames } from '../../../api/naming.js';
import { scramVerifier, verifierMatches } from './scram.js';

/**
 * The role PgBouncer authenticates clients through (auth_query), kept in place by the primary:
 * a LOGIN role without other privileges, and in every connectable database a schema with one
 * SECURITY DEFINER function that returns the SCRAM verifier of an ordinary login role. It refuses
 * superusers and replication roles, so the pooler never serves them; no client password is stored
 * in a file. Its own password follows the mounted `<cluster>-pooler` Secret.
 */
export const poolerRoleName = RoleNames.pooler;
export const poolerSchema = 'keelson_pooler';

/** The lookup function; owned by the superuser running it, callable only by the pooler role. */
export function lookupFunctionSql(role: string): string {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${poolerSchema}`,
    `REVOKE ALL ON SCHEMA ${poolerSchema} FROM PUBLIC`,
    `GRANT USAGE ON SCHEMA ${poolerSchema} TO ${role}`,
    `CREATE OR REPLACE FUNCTION ${poolerSchema}.user_lookup(i_username text, OUT usename name, OUT passwd text)
      RETURNS record LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog AS
      $$ SELECT rolname, rolpassword FROM pg_catalog.pg_authid
         WHERE rolname = i_username AND rolcanlogin AND NOT rolsuper AND NOT rolreplication AND rolname <> '${role}' $$`,
    `REVOKE ALL ON FUNCTION ${poolerSchema}.user_lookup(text) FROM PUBLIC`,
    `GRANT EXECUTE ON FUNCTION ${poolerSchema}.user_lookup(text) TO ${role}`,
  ].join(';\n');
}

export class PoolerRoleKeeper {
  private confirmed: string | undefined;

  constructor(
    private readonly passwordFile: string,
    private readonly logger: Logger,
  ) {}

  /** Role, schema and function on a writable primary; checked again when `serverIdentity` or the password changes. */
  async ensure(connect: (database: string) => Promise<pg.Client>, serverIdentity: string): Promise<void> {
    const password = readFileSync(this.passwordFile, 'utf8');
    if (!password) throw new Error('the pooler password file is empty');
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([serverIdentity, password]))
      .digest('hex');
    if (fingerprint === this.confirmed) return;
    const client = await connect('postgres');
    let databases: string[];
    try {
      const found = await client.query<{ rolpassword: string | null }>('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [poolerRoleName]);
      const verifier = client.escapeLiteral(scramVerifier(password));
      if (!found.rows[0]) await client.query(`CREATE ROLE ${poolerRoleName} WITH LOGIN PASSWORD ${verifier}`);
      else if (!verifierMatches(found.rows[0].rolpassword, password)) await client.query(`ALTER ROLE ${poolerRoleName} WITH LOGIN PASSWORD ${verifier}`);
      databases = (await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datallowconn ORDER BY datname')).rows.map((r) => r.datname);
    } finally {
      await client.end().catch(() => undefined);
    }
    // template1 included: a database created later inherits the function.
    for (const database of databases) {
      const db = await connect(database);
      try {
        await db.query(lookupFunctionSql(poolerRoleName));
      } finally {
        await db.end().catch(() => undefined);
      }
    }
    this.confirmed = fingerprint;
    this.logger.info({ databases: databases.length }, 'pooler role and lookup function in place');
  }
}
