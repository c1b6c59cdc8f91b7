import { createHash } from 'node:crypto';
import type pg from 'pg';
import { describeApiError } from '../../../lib/kube/client.js';
import type { Logger } from '../../../lib/log.js';
import { managedRolesSchema, type ManagedRole } from '../../../api/crd/managed-roles.js';
import { managedRolesHash, type ManagedDatabaseResult, type ManagedReport, type ManagedRoleResult } from '../../../api/crd/managed-status.js';
import { applyDatabases, openSession, run, type Connect } from './apply.js';
import { readRoles } from './catalog.js';
import { databaseIntents } from './database-plan.js';
import type { ManagedKubeReads, SecretRead } from './kube-reads.js';
import { planRoles, type SecretPassword } from './role-plan.js';

/**
 * The leader's keeper of spec.roles and the cluster's Database objects. Each HA cycle on a
 * writable primary it reads the Secrets and Databases, and when anything changed (or a minute
 * passed) compares with the catalogs and runs only the differences. A role's statements run in
 * one transaction, so a failover in the middle leaves each role either as it was or as wanted;
 * the next leader starts from the catalogs again. Between cycles a light poll of the Secrets'
 * versions wakes the loop, so a password edit reaches PostgreSQL within seconds.
 */

export interface ManagedKeeperOptions {
  reads: ManagedKubeReads;
  logger: Logger;
  wake(reason: string): void;
  /** How often the leader looks for a changed password Secret. */
  secretPollMs?: number;
  /** How often an unchanged state is compared with the catalogs again (drift by hand). */
  recheckMs?: number;
}

export function hashOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

export class ManagedKeeper {
  private last: ManagedReport | undefined;
  private fingerprint: string | undefined;
  private comparedAt = 0;
  private ranAt = 0;
  private watched: { secret: string; role: string; version: string }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private listError: string | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly options: ManagedKeeperOptions) {}

  /** The last pass's results (the operator reads them through GET /managed). */
  report(): ManagedReport | undefined {
    return this.last;
  }

  /** Starts the between-cycles look at the password Secrets (only while this member keeps the roles). */
  start(): void {
    this.timer ??= setInterval(() => void this.pollSecrets(), this.options.secretPollMs ?? 2_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.options.reads.stop?.();
  }

  private async pollSecrets(): Promise<void> {
    if (this.polling || Date.now() - this.ranAt > 30_000 || this.watched.length === 0) return;
    this.polling = true;
    try {
      for (const entry of this.watched) {
        const read = await this.options.reads.secret(entry.secret, entry.role);
        if (read.resourceVersion !== entry.version) {
          this.options.wake('password-secret-changed');
          return;
        }
      }
    } finally {
      this.polling = false;
    }
  }

  /**
   * Starts a pass unless one is still running, and returns at once: a statement that waits (a lock,
   * a large CREATE DATABASE) must never hold up the HA loop and its lease renewal.
   */
  keepInBackground(connect: Connect, rolesValue: unknown, serverIdentity: string, onError: (error: Error) => void): void {
    if (this.inFlight) return;
    this.inFlight = this.keep(connect, rolesValue, serverIdentity)
      .catch(onError)
      .finally(() => {
        this.inFlight = undefined;
      });
  }

  /** One pass on a writable primary. `rolesValue` is the dynamic configuration's `roles`. */
  async keep(connect: Connect, rolesValue: unknown, serverIdentity: string): Promise<void> {
    this.ranAt = Date.now();
    const parsed = managedRolesSchema.safeParse(rolesValue ?? []);
    if (!parsed.success)
      this.options.logger.warn({ err: parsed.error.issues[0]?.message }, 'the dynamic configuration holds invalid roles; they are not applied');
    const roles = parsed.success ? parsed.data : [];
    const secrets = await this.readSecrets(roles);
    const databases = await this.options.reads.databases().then(
      (found) => ({ ...found, error: undefined }),
      // The status and its message only: client-node's own text carries the response's headers (a Date).
      (error: unknown) => ({ objects: [], unreadable: [], error: describeApiError(error) }),
    );
    // Logged once per distinct error (a server without the Database kind answers the same every cycle).
    if (databases.error && databases.error !== this.listError)
      this.options.logger.warn({ err: databases.error }, 'cannot list the Database objects; only roles are kept until the list works');
    this.listError = databases.error;
    // What the objects ask for, not their versions: the operator's own status writes change no plan.
    const asked = databases.objects.map((o) => [o.metadata.uid, o.metadata.generation, o.metadata.deletionTimestamp, o.spec]);
    const fingerprint = hashOf([
      serverIdentity,
      roles,
      [...secrets].map(([role, s]) => [role, s.resourceVersion]),
      asked,
      databases.unreadable,
      databases.error,
    ]);
    const clean = this.last && this.last.roles.every((r) => r.applied) && this.last.databases.every((d) => d.applied);
    if (fingerprint === this.fingerprint && clean && Date.now() - this.comparedAt < (this.options.recheckMs ?? 60_000)) return;
    // Nothing declared: nothing to compare, no connection (most clusters).
    if (roles.length === 0 && databases.objects.length === 0 && databases.unreadable.length === 0) {
      this.last = { at: new Date().toISOString(), rolesHash: managedRolesHash(rolesValue), roles: [], databases: [], statements: 0 };
      this.fingerprint = fingerprint;
      this.comparedAt = Date.now();
      this.watched = [];
      return;
    }
    const client = await openSession(connect);
    let statements: number;
    let roleResults: ManagedRoleResult[];
    let databaseResults: ManagedDatabaseResult[];
    try {
      const passwords = new Map<string, SecretPassword>([...secrets].map(([role, read]) => [role, read.password]));
      ({ results: roleResults, statements } = await this.applyRoles(client, roles, passwords));
      const applied = await applyDatabases(client, connect, databaseIntents(databases.objects));
      statements += applied.statements;
      databaseResults = [
        ...applied.results,
        ...databases.unreadable.map((u) => ({ uid: u.uid, object: u.name, name: '', applied: false, message: u.message })),
      ];
    } finally {
      await client.end().catch(() => undefined);
    }
    const at = new Date().toISOString();
    const lastChange = statements > 0 ? { at, statements } : this.last?.lastChange;
    this.last = {
      at,
      rolesHash: managedRolesHash(rolesValue),
      roles: roleResults,
      databases: databaseResults,
      statements,
      ...(lastChange ? { lastChange } : {}),
    };
    this.fingerprint = fingerprint;
    this.comparedAt = Date.now();
    this.watched = roles.flatMap((r) =>
      r.passwordSecret && r.ensure === 'present' ? [{ secret: r.passwordSecret.name, role: r.name, version: secrets.get(r.name)?.resourceVersion ?? '' }] : [],
    );
    if (statements > 0)
      this.options.logger.info(
        { statements, roles: roleResults.filter((r) => !r.applied).length, databases: databaseResults.filter((d) => !d.applied).length },
        'managed roles and databases changed',
      );
  }

  private async readSecrets(roles: readonly ManagedRole[]): Promise<Map<string, SecretRead>> {
    const secrets = new Map<string, SecretRead>();
    for (const role of roles) {
      if (role.passwordSecret && role.ensure === 'present') secrets.set(role.name, await this.options.reads.secret(role.passwordSecret.name, role.name));
    }
    return secrets;
  }

  private async applyRoles(
    client: pg.Client,
    roles: readonly ManagedRole[],
    passwords: Map<string, SecretPassword>,
  ): Promise<{ results: ManagedRoleResult[]; statements: number }> {
    const actual = await readRoles(
      client,
      roles.map((r) => r.name),
    );
    let statements = 0;
    const byName = new Map<string, ManagedRoleResult>();
    for (const plan of planRoles(roles, actual, passwords)) {
      const failure = await run(client, plan.statements, true);
      if (!failure) statements += plan.statements.length;
      const message = failure ?? plan.problem;
      byName.set(plan.name, message ? { name: plan.name, applied: false, message } : { name: plan.name, applied: true });
    }
    return { results: roles.map((r) => byName.get(r.name)!), statements };
  }
}
