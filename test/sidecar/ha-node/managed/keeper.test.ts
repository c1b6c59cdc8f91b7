import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ApiException } from '@kubernetes/client-node';
import { createLogger } from '../../../../lib/log.js';
import type { DatabaseObject } from '../../../../api/crd/database-kind.js';
import { databaseObjectSpecSchema } from '../../../../api/crd/database-kind.js';
import { managedRolesHash } from '../../../../api/crd/managed-status.js';
import { ManagedKeeper } from '../../../../sidecar/ha-node/managed/keeper.js';
import { secretPassword, type ManagedKubeReads, type SecretRead } from '../../../../sidecar/ha-node/managed/kube-reads.js';
import { startPostgres, type TestPostgres } from '../../../support/postgres.js';

/**
 * The keeper against PostgreSQL 15: roles and databases created, changed and removed from the
 * spec, only differences run, passwords from Secrets (tried by logging in), refusals in the
 * report. The Kubernetes reads are an in-memory table of Secrets and Database objects.
 */

const logger = createLogger({ name: 'managed-test', level: 'silent' });

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

class MemoryReads implements ManagedKubeReads {
  secrets = new Map<string, { type: string; username: string; password: string; version: number }>();
  objects: DatabaseObject[] = [];
  /** Set: the Database list fails with it (a server without the kind, RBAC missing). */
  listError: Error | undefined;

  setSecret(name: string, username: string, password: string, type = 'kubernetes.io/basic-auth'): void {
    const version = (this.secrets.get(name)?.version ?? 0) + 1;
    this.secrets.set(name, { type, username, password, version });
  }

  secret(name: string, role: string): Promise<SecretRead> {
    const found = this.secrets.get(name);
    if (!found) return Promise.resolve({ password: { problem: `Secret "${name}" not found` }, resourceVersion: 'missing' });
    const data = { username: Buffer.from(found.username).toString('base64'), password: Buffer.from(found.password).toString('base64') };
    return Promise.resolve({ password: secretPassword({ type: found.type, data }, name, role), resourceVersion: String(found.version) });
  }

  databases(): Promise<{ objects: DatabaseObject[]; unreadable: [] }> {
    if (this.listError) return Promise.reject(this.listError);
    return Promise.resolve({ objects: this.objects, unreadable: [] });
  }
}

function database(name: string, spec: Record<string, unknown>, created = '2026-01-01T00:00:00Z'): DatabaseObject {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, creationTimestamp: created },
    spec: databaseObjectSpecSchema.parse(spec),
  };
}

describe('managed roles and databases against PostgreSQL 15', { timeout: 120_000 }, () => {
  let server: TestPostgres;
  const reads = new MemoryReads();
  const keeper = new ManagedKeeper({ reads, logger, wake: () => undefined, recheckMs: 0 });
  let identity = 0;
  const connect = async (database?: string) => {
    const client = new pg.Client({ connectionString: database ? server.urlFor(database) : server.url });
    await client.connect();
    return client;
  };
  /** One pass; a new identity each time so the pass compares with the catalogs. */
  const pass = async (roles: unknown) => {
    await keeper.keep(connect, roles, `sys/1/${identity++}`);
    return keeper.report()!;
  };
  const login = async (user: string, password: string, database = 'postgres'): Promise<string> => {
    const client = new pg.Client({ host: server.host, port: server.port, user, password, database });
    try {
      await client.connect();
      return (await client.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u;
    } catch (error) {
      return `refused: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
  });

  it('creates roles with their attributes, memberships, comment and Secret password; a second pass runs nothing', async () => {
    reads.setSecret('alice-secret', 'alice', 'first password');
    const roles = [
      { name: 'readers' },
      {
        name: 'alice',
        login: true,
        createdb: true,
        connectionLimit: 5,
        validUntil: '2099-01-01T00:00:00Z',
        inRoles: ['readers'],
        comment: "Alice's role",
        passwordSecret: { name: 'alice-secret' },
      },
      // Upper case and "-": reaches SQL quoted.
      { name: 'OddName-1', login: true },
    ];
    const report = await pass(roles);
    assert.deepEqual(
      report.roles.map((r) => [r.name, r.applied, r.message]),
      [
        ['readers', true, undefined],
        ['alice', true, undefined],
        ['OddName-1', true, undefined],
      ],
    );
    assert.equal(report.rolesHash, managedRolesHash(roles));
    assert.ok(report.statements >= 5, `statements: ${report.statements}`);
    const { rows } = await server.query<{
      rolcanlogin: boolean;
      rolcreatedb: boolean;
      rolconnlimit: number;
      until: string;
      comment: string;
      member_of: string[];
    }>(
      `SELECT rolcanlogin, rolcreatedb, rolconnlimit, to_char(rolvaliduntil AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS until, shobj_description(oid, 'pg_authid') AS comment,
        ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_authid g ON g.oid = m.roleid WHERE m.member = r.oid)::text[] AS member_of
       FROM pg_authid r WHERE rolname = 'alice'`,
    );
    assert.deepEqual(rows[0], { rolcanlogin: true, rolcreatedb: true, rolconnlimit: 5, until: '2099-01-01', comment: "Alice's role", member_of: ['readers'] });
    assert.equal(await login('alice', 'first password'), 'alice');
    assert.equal((await server.query("SELECT 1 FROM pg_authid WHERE rolname = 'OddName-1'")).rowCount, 1);
    const again = await pass(roles);
    assert.equal(again.statements, 0, 'nothing differs: nothing runs');
  });

  it('changes only what differs, rotates the password from the Secret and revokes memberships no longer listed', async () => {
    reads.setSecret('alice-secret', 'alice', 'second password');
    const roles = [
      { name: 'readers' },
      {
        name: 'alice',
        login: true,
        createdb: false,
        connectionLimit: 5,
        validUntil: '2099-01-01T00:00:00Z',
        comment: "Alice's role",
        passwordSecret: { name: 'alice-secret' },
      },
      { name: 'OddName-1', login: true },
    ];
    const report = await pass(roles);
    // NOCREATEDB, the password, the revoke: three statements, nothing for the unchanged roles.
    assert.equal(report.statements, 3);
    assert.ok(report.roles.every((r) => r.applied));
    assert.equal(await login('alice', 'second password'), 'alice');
    assert.match(await login('alice', 'first password'), /refused: password authentication failed/);
    assert.equal((await server.query("SELECT 1 FROM pg_auth_members m JOIN pg_authid r ON r.oid = m.member WHERE r.rolname = 'alice'")).rowCount, 0);
  });

  it('reports a Secret of the wrong type or for another user, and never drops a role that owns objects', async () => {
    reads.setSecret('bad-type', 'bob', 'pw', 'Opaque');
    reads.setSecret('other-user', 'someone', 'pw');
    await server.query('CREATE ROLE owner_of_things');
    await server.query('CREATE TABLE owned_table (id int)');
    await server.query('ALTER TABLE owned_table OWNER TO owner_of_things');
    await server.query('CREATE ROLE unused_role');
    const report = await pass([
      { name: 'bob', login: true, passwordSecret: { name: 'bad-type' } },
      { name: 'carol', login: true, passwordSecret: { name: 'other-user' } },
      { name: 'owner_of_things', ensure: 'absent' },
      { name: 'unused_role', ensure: 'absent' },
    ]);
    const byName = new Map(report.roles.map((r) => [r.name, r]));
    assert.match(byName.get('bob')!.message!, /must be of type kubernetes\.io\/basic-auth/);
    assert.match(byName.get('carol')!.message!, /is for user "someone", not for role "carol"/);
    assert.match(byName.get('owner_of_things')!.message!, /role "owner_of_things" cannot be dropped because some objects depend on it/);
    assert.equal(byName.get('unused_role')!.applied, true);
    assert.equal((await server.query("SELECT 1 FROM pg_authid WHERE rolname = 'owner_of_things'")).rowCount, 1, 'the owner stays');
    assert.equal((await server.query("SELECT 1 FROM pg_authid WHERE rolname = 'unused_role'")).rowCount, 0, 'the unused role is gone');
  });

  it('creates databases with schemas and extensions, refuses a second object for the same database and reports a missing extension', async () => {
    reads.objects = [
      database('app-db', {
        cluster: 'c',
        name: 'inventory',
        owner: 'alice',
        schemas: [{ name: 'sales' }],
        extensions: [{ name: 'citext', schema: 'sales' }, { name: 'no_such_extension' }],
      }),
      database('copy', { cluster: 'c', name: 'inventory', owner: 'readers' }, '2026-02-01T00:00:00Z'),
    ];
    const report = await pass([{ name: 'readers' }, { name: 'alice', login: true, passwordSecret: { name: 'alice-secret' } }]);
    const [first, second] = report.databases;
    assert.equal(first!.object, 'app-db');
    assert.equal(first!.applied, false);
    assert.match(first!.message!, /extension "no_such_extension" is not available on the server/);
    assert.deepEqual([second!.object, second!.applied, second!.message], ['copy', false, 'database "inventory" is already managed by Database "app-db"']);
    const inside = new pg.Client({ connectionString: server.urlFor('inventory') });
    await inside.connect();
    try {
      const { rows } = await inside.query<{ owner: string; schema_owner: string; ext_schema: string }>(
        `SELECT pg_get_userbyid(d.datdba) AS owner, (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'sales') AS schema_owner,
           (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'citext') AS ext_schema
         FROM pg_database d WHERE datname = 'inventory'`,
      );
      assert.deepEqual(rows[0], { owner: 'alice', schema_owner: 'alice', ext_schema: 'sales' });
    } finally {
      await inside.end();
    }
    assert.equal(await login('alice', 'second password', 'inventory'), 'alice');
  });

  it('retains or drops a deleted object’s database by its reclaim policy', async () => {
    reads.objects = [
      database('kept', { cluster: 'c', name: 'kept_db', owner: 'readers', reclaimPolicy: 'retain' }),
      database('dropped', { cluster: 'c', name: 'dropped_db', owner: 'readers', reclaimPolicy: 'delete' }),
    ];
    await pass([{ name: 'readers' }]);
    const deleted = (o: DatabaseObject): DatabaseObject => ({ ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-03-01T00:00:00Z' } });
    reads.objects = reads.objects.map(deleted);
    const report = await pass([{ name: 'readers' }]);
    assert.deepEqual(
      report.databases.map((d) => [d.object, d.applied, d.released]),
      [
        ['dropped', true, true],
        ['kept', true, true],
      ],
    );
    const names = (await server.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname IN ('kept_db', 'dropped_db')")).rows.map(
      (r) => r.datname,
    );
    assert.deepEqual(names, ['kept_db']);
  });

  it('keeps the roles when the Database objects cannot be listed', async () => {
    reads.listError = new Error('HTTP 404: the server could not find the requested resource');
    try {
      const report = await pass([{ name: 'readers' }, { name: 'list_failed_role', login: true }]);
      assert.deepEqual(
        report.roles.map((r) => r.applied),
        [true, true],
      );
      assert.deepEqual(report.databases, []);
      assert.equal((await server.query("SELECT 1 FROM pg_authid WHERE rolname = 'list_failed_role'")).rowCount, 1);
    } finally {
      reads.listError = undefined;
    }
  });

  it('a list error that repeats is logged once, though client-node puts the response Date in its text', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const quiet = new ManagedKeeper({
      reads,
      logger: createLogger({ name: 'keeper-test', level: 'warn', destination }),
      wake: () => undefined,
    });
    const body = JSON.stringify({ kind: 'Status', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 });
    try {
      for (let second = 0; second < 3; second += 1) {
        const date = new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toUTCString();
        reads.listError = new ApiException(404, `HTTP-Code: 404\nBody: ${body}\nHeaders: ${JSON.stringify({ date })}`, body, { date });
        await quiet.keep(connect, [], `sys/1/list-error`);
      }
    } finally {
      reads.listError = undefined;
    }
    const warnings = lines.filter((line) => line.includes('cannot list the Database objects'));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /HTTP 404: the server could not find the requested resource/);
    assert.doesNotMatch(warnings[0]!, /Headers/);
  });

  it('a role another session holds is reported after the lock timeout, and the other roles are applied', async () => {
    const blocker = new pg.Client({ connectionString: server.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('CREATE ROLE held_role');
      const report = await pass([{ name: 'held_role' }, { name: 'after_held' }]);
      assert.match(report.roles[0]!.message!, /canceling statement due to lock timeout/);
      assert.deepEqual(report.roles[1], { name: 'after_held', applied: true });
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    // One pass at a time beside the loop: a second start while one runs is skipped.
    let errors = 0;
    keeper.keepInBackground(connect, [{ name: 'background_role' }], `sys/1/${identity++}`, () => errors++);
    keeper.keepInBackground(connect, [{ name: 'never_started' }], `sys/1/${identity++}`, () => errors++);
    await eventually(async () => (await server.query("SELECT 1 FROM pg_authid WHERE rolname = 'background_role'")).rowCount === 1);
    assert.equal((await server.query("SELECT 1 FROM pg_authid WHERE rolname = 'never_started'")).rowCount, 0);
    assert.equal(errors, 0);
  });

  it('applies nothing from a dynamic configuration whose roles are invalid', async () => {
    reads.objects = [];
    const report = await pass([{ name: 'postgres', superuser: true }]);
    assert.deepEqual(report.roles, []);
    assert.equal(report.statements, 0);
  });
});
