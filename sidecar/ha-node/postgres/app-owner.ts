import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { Logger } from '../../../lib/log.js';
import { scramVerifier, verifierMatches } from './scram.js';

/**
 * The application's role and database (DatabaseCluster spec.bootstrap), kept in place by the
 * primary: created when missing (after initdb, a failover or a restore alike) and the role's
 * password set whenever it differs from the password file (the mounted `<cluster>-app` Secret),
 * so a changed Secret reaches PostgreSQL without a restart. The password is sent only as a SCRAM
 * verifier and never logged.
 */
export interface AppOwnerSettings {
  /** Role that owns the application database; unset: no role is managed. */
  owner?: string;
  /** Application database; unset or "postgres": none is created. */
  database?: string;
  /** File holding the owner's password (no trailing newline is added or removed). */
  passwordFile?: string;
}

/** Names ha-node needs for itself; the application owner may not be one of them. */
export function appOwnerProblem(owner: string | undefined, reserved: readonly string[]): string | undefined {
  if (owner && reserved.includes(owner)) return `the application owner "${owner}" must differ from the superuser and replication roles`;
  return undefined;
}

export class AppOwnerKeeper {
  /** Fingerprint of the last state confirmed in place (server identity, names, password hash). */
  private confirmed: string | undefined;
  private lastProblem: string | undefined;

  constructor(
    private readonly settings: AppOwnerSettings,
    private readonly logger: Logger,
  ) {}

  get active(): boolean {
    return Boolean(this.settings.owner || (this.settings.database && this.settings.database !== 'postgres'));
  }

  private readPassword(): string | undefined {
    if (!this.settings.passwordFile) return undefined;
    try {
      const password = readFileSync(this.settings.passwordFile, 'utf8');
      return password.length > 0 ? password : undefined;
    } catch (error) {
      this.warnOnce(`cannot read the application password file: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
      return undefined;
    }
  }

  private warnOnce(problem: string): void {
    if (problem === this.lastProblem) return;
    this.lastProblem = problem;
    this.logger.warn({ owner: this.settings.owner, database: this.settings.database }, problem);
  }

  /**
   * Makes role and database exist on a writable primary. `serverIdentity` changes with every
   * server start and timeline, so a promotion or restart checks again; otherwise only a changed
   * password file costs a round trip.
   */
  async ensure(connect: () => Promise<pg.Client>, serverIdentity: string): Promise<void> {
    if (!this.active) return;
    const password = this.readPassword();
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([serverIdentity, this.settings.owner, this.settings.database, password ?? null]))
      .digest('hex');
    if (fingerprint === this.confirmed) return;
    const client = await connect();
    try {
      const { owner, database } = this.settings;
      const passwordSet = owner ? await this.ensureRole(client, owner, password) : false;
      const databaseCreated = database && database !== 'postgres' ? await ensureDatabase(client, database, owner) : false;
      this.confirmed = fingerprint;
      this.lastProblem = undefined;
      if (passwordSet || databaseCreated) this.logger.info({ owner, database, passwordSet, databaseCreated }, 'application role and database in place');
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Returns true when the role was created or its password or LOGIN changed. */
  private async ensureRole(client: pg.Client, owner: string, password: string | undefined): Promise<boolean> {
    const role = client.escapeIdentifier(owner);
    const found = await client.query<{ rolpassword: string | null; rolcanlogin: boolean; rolsuper: boolean; rolreplication: boolean }>(
      'SELECT rolpassword, rolcanlogin, rolsuper, rolreplication FROM pg_authid WHERE rolname = $1',
      [owner],
    );
    const passwordClause = password === undefined ? '' : ` PASSWORD ${client.escapeLiteral(scramVerifier(password))}`;
    const row = found.rows[0];
    if (!row) {
      await client.query(`CREATE ROLE ${role} WITH LOGIN${passwordClause}`);
      return true;
    }
    if (row.rolsuper || row.rolreplication) {
      this.warnOnce('the application owner is a superuser or replication role; ha-node leaves it alone');
      return false;
    }
    const passwordDiffers = password !== undefined && !verifierMatches(row.rolpassword, password);
    if (row.rolcanlogin && !passwordDiffers) return false;
    await client.query(`ALTER ROLE ${role} WITH LOGIN${passwordDiffers ? passwordClause : ''}`);
    return true;
  }
}

/** Creates the database (owned by `owner` when given) unless it exists; an existing one is left as it is. */
async function ensureDatabase(client: pg.Client, database: string, owner: string | undefined): Promise<boolean> {
  const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (found.rowCount) return false;
  await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}${owner ? ` OWNER ${client.escapeIdentifier(owner)}` : ''}`);
  return true;
}
