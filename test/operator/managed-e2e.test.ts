import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import pg from 'pg';
import { Ports } from '../../lib/ports.js';
import { group, plural, version } from '../../api/crd/types.js';
import { haNodeClientFor } from '../support/ha-node-api.js';
import { names } from '../../api/naming.js';
import { viaClusterIp } from './e2e-support.js';
import { startPooledCluster, type PooledCluster } from './pooler-e2e-support.js';
import { eventually } from './support.js';
import { verifyFullTo } from './cluster-tls.js';

/**
 * spec.roles and the Database kind on an operator-run cluster (stand-in, local node, real
 * PostgreSQL and PgBouncer): roles and a database appear as the spec says and each role logs in
 * with its Secret's password; a password edited in its Secret works through the pooler within
 * seconds (measured) while a client that keeps its connection sees no failed transaction; a role
 * that owns objects is not dropped and says why; a failover while roles are being applied leaves
 * the new leader to finish them.
 */
const name = 'managed';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface RoleStatus {
  name: string;
  applied: boolean;
  message?: string;
}

describe('declarative roles and databases (stand-in, real PostgreSQL and PgBouncer)', { timeout: 900_000 }, () => {
  let cluster: PooledCluster;

  const patchSpec = (spec: Record<string, unknown>) =>
    cluster.api.custom.patchNamespacedCustomObject({ group, version, namespace: cluster.namespace, plural, name, body: { spec } }, mergePatch);
  const status = async () =>
    (await cluster.driver.status()) as Awaited<ReturnType<PooledCluster['driver']['status']>> & {
      roles?: RoleStatus[];
      conditions?: { type: string; status: string; message: string }[];
    };
  const rolesCondition = async () => (await status()).conditions?.find((c) => c.type === 'RolesReconciled');
  const writeSecret = async (secret: string, username: string, password: string) => {
    const body = { metadata: { name: secret, namespace: cluster.namespace }, type: 'kubernetes.io/basic-auth', stringData: { username, password } };
    try {
      await cluster.api.core.replaceNamespacedSecret({ namespace: cluster.namespace, name: secret, body });
    } catch {
      await cluster.api.core.createNamespacedSecret({ namespace: cluster.namespace, body });
    }
  };
  const poolerHost = () => eventually('the pooler Service address', () => viaClusterIp(cluster.api, cluster.namespace, names(name).poolerRwService), 30_000);
  const primaryHost = async () => cluster.podIp((await status()).currentPrimary!);
  /** Verified TLS to a member or the pooler (every remote session needs TLS). */
  const tlsTo = (host: string) => verifyFullTo(cluster.api, cluster.namespace, name, host);
  const primaryClient = async (password: string) => {
    const host = await primaryHost();
    return new pg.Client({ host, port: Ports.postgres, user: 'alice', password, database: 'shop', ssl: await tlsTo(host) });
  };
  /** Logs in and answers current_user, or the refusal. */
  const login = async (host: string, user: string, password: string, database: string): Promise<string> => {
    const client = new pg.Client({
      host,
      port: Ports.postgres,
      user,
      password,
      database,
      ssl: await tlsTo(host),
      connectionTimeoutMillis: 5_000,
      query_timeout: 10_000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u;
    } catch (error) {
      return `refused: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const databaseObject = (object: string, spec: Record<string, unknown>) =>
    cluster.api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: cluster.namespace,
      plural: 'databases',
      body: { apiVersion: `${group}/${version}`, kind: 'Database', metadata: { name: object }, spec },
    });
  const databaseStatus = async (object: string) =>
    (
      (await cluster.api.custom.getNamespacedCustomObject({ group, version, namespace: cluster.namespace, plural: 'databases', name: object })) as {
        status?: { applied?: boolean; message?: string };
      }
    ).status;

  before(async () => {
    cluster = await startPooledCluster({
      name,
      ipPrefix: '127.0.63',
      spec: { instances: 2, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 }, pooler: { enabled: true, instances: 1 } },
    });
  });
  after(async () => cluster?.close());

  it('creates the roles and a Database from the spec; each role logs in with its Secret’s password', async () => {
    await writeSecret('alice-login', 'alice', 'alice first');
    const patched = Date.now();
    await patchSpec({
      roles: [{ name: 'readers' }, { name: 'alice', login: true, inRoles: ['readers'], comment: 'the shop owner', passwordSecret: { name: 'alice-login' } }],
    });
    await databaseObject('shop', {
      cluster: name,
      name: 'shop',
      owner: 'alice',
      schemas: [{ name: 'sales' }],
      extensions: [{ name: 'citext', schema: 'sales' }],
    });
    await eventually('RolesReconciled True', async () => (await rolesCondition())?.status === 'True', 120_000);
    const report = await (await haNodeClientFor(cluster.api, cluster.namespace, name)).managed(await primaryHost());
    process.stderr.write(
      `# spec patch to RolesReconciled True: ${Date.now() - patched} ms; the leader's pass that applied them ran ${report?.lastChange?.statements} statements\n`,
    );
    assert.deepEqual((await status()).roles, [
      { name: 'readers', applied: true },
      { name: 'alice', applied: true },
    ]);
    await eventually('Database shop applied', async () => (await databaseStatus('shop'))?.applied === true, 60_000);
    assert.equal(await login(await primaryHost(), 'alice', 'alice first', 'shop'), 'alice');
    assert.equal(
      await eventually(
        'alice through the pooler',
        async () => ((await login(await poolerHost(), 'alice', 'alice first', 'shop')) === 'alice' ? 'alice' : undefined),
        30_000,
      ),
      'alice',
    );
    // The schema and the extension in it, as alice sees them in her database.
    const shop = await primaryClient('alice first');
    await shop.connect();
    try {
      const found = await shop.query<{ ext: string; owner: string }>(
        "SELECT n.nspname AS ext, pg_get_userbyid(s.nspowner) AS owner FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace JOIN pg_namespace s ON s.nspname = 'sales' WHERE e.extname = 'citext'",
      );
      assert.deepEqual(found.rows[0], { ext: 'sales', owner: 'alice' });
    } finally {
      await shop.end();
    }
    assert.ok(
      (await cluster.driver.events()).some((e) => e.reason === 'RolesApplied'),
      'a RolesApplied Event',
    );
  });

  it('a password edited in its Secret works through the pooler within seconds, the old one stops, a connected client sees no failure', async () => {
    const host = await poolerHost();
    const steady = new pg.Client({
      host,
      port: Ports.postgres,
      user: 'alice',
      password: 'alice first',
      database: 'shop',
      ssl: await tlsTo(host),
      query_timeout: 10_000,
    });
    steady.on('error', () => undefined);
    await steady.connect();
    let transactions = 0;
    const failures: string[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          await steady.query('SELECT 1');
          transactions++;
        } catch (error) {
          failures.push((error as Error).message);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 500));
      const edited = Date.now();
      await writeSecret('alice-login', 'alice', 'alice second');
      const worksAfterMs = await eventually(
        'the new password through the pooler',
        async () => ((await login(host, 'alice', 'alice second', 'shop')) === 'alice' ? Date.now() - edited : undefined),
        60_000,
      );
      process.stderr.write(`# Secret edit to the new password working through the pooler: ${worksAfterMs} ms\n`);
      assert.match(await login(host, 'alice', 'alice first', 'shop'), /refused/);
      assert.match(await login(await primaryHost(), 'alice', 'alice first', 'shop'), /refused: password authentication failed/);
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      running = false;
      await loop;
      await steady.end().catch(() => undefined);
    }
    process.stderr.write(`# steady client: ${transactions} transactions, ${failures.length} failed\n`);
    assert.deepEqual(failures, [], 'no transaction of the connected client failed');
    assert.ok(transactions > 10, 'the client kept working');
  });

  it('a role that owns objects is not dropped, and status and an Event say why', async () => {
    const shop = await primaryClient('alice second');
    await shop.connect();
    await shop.query('CREATE TABLE sales.orders (id int)');
    await shop.end();
    await patchSpec({ roles: [{ name: 'readers' }, { name: 'alice', ensure: 'absent', passwordSecret: { name: 'alice-login' } }] });
    const alice = await eventually(
      'alice not applied',
      async () => (await status()).roles?.find((r) => r.name === 'alice' && !r.applied && r.message),
      120_000,
    );
    assert.match(alice.message!, /role "alice" cannot be dropped because some objects depend on it/);
    assert.equal((await rolesCondition())?.status, 'False');
    assert.ok(
      (await cluster.driver.events()).some((e) => e.reason === 'RoleNotApplied' && /alice/.test(e.message ?? '')),
      'a RoleNotApplied Event',
    );
    assert.equal(await login(await primaryHost(), 'alice', 'alice second', 'shop'), 'alice', 'alice is still there');
  });

  it('a second Database for the same database is refused in its status; deleting drops or keeps by reclaim policy', async () => {
    await databaseObject('shop-copy', { cluster: name, name: 'shop', owner: 'readers' });
    const copy = await eventually(
      'shop-copy refused',
      async () => {
        const s = await databaseStatus('shop-copy');
        return s?.applied === false && s.message?.includes('already managed') ? s : undefined;
      },
      60_000,
    );
    assert.equal(copy.message, 'database "shop" is already managed by Database "shop"');
    await databaseObject('scratch', { cluster: name, name: 'scratch', owner: 'readers', reclaimPolicy: 'delete' });
    await databaseObject('kept', { cluster: name, name: 'kept', owner: 'readers', reclaimPolicy: 'retain' });
    for (const object of ['scratch', 'kept']) await eventually(`${object} applied`, async () => (await databaseStatus(object))?.applied === true, 60_000);
    for (const object of ['scratch', 'kept', 'shop-copy'])
      await cluster.api.custom.deleteNamespacedCustomObject({ group, version, namespace: cluster.namespace, plural: 'databases', name: object });
    for (const object of ['scratch', 'kept', 'shop-copy']) {
      await eventually(
        `${object} gone`,
        async () =>
          await databaseStatus(object).then(
            () => false,
            () => true,
          ),
        60_000,
      );
    }
    const client = await cluster.direct((await status()).currentPrimary!);
    try {
      const rows = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname IN ('scratch', 'kept', 'shop') ORDER BY 1");
      assert.deepEqual(
        rows.rows.map((r) => r.datname),
        ['kept', 'shop'],
        'scratch dropped, kept retained, shop untouched by its refused copy',
      );
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  it('a failover while roles are being applied: the new leader finishes them', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ name: `member_${String(i).padStart(2, '0')}`, login: true, inRoles: ['readers'] }));
    const roles = [{ name: 'readers' }, { name: 'alice', login: true, passwordSecret: { name: 'alice-login' } }, ...many];
    const old = (await status()).currentPrimary!;
    const watcher = await cluster.direct(old);
    // An uncommitted CREATE ROLE of the 21st role holds the leader's pass there (its CREATE ROLE
    // waits on the same name): the primary crashes with 20 of the 40 roles made.
    const blocker = await cluster.direct(old);
    await blocker.query('BEGIN');
    await blocker.query('CREATE ROLE member_20');
    await patchSpec({ roles });
    const seen = await eventually(
      'the leader held at the 21st role',
      async () => {
        const n = Number((await watcher.query<{ n: string }>("SELECT count(*) AS n FROM pg_authid WHERE rolname LIKE 'member\\_%'")).rows[0]!.n);
        const waiting = (await watcher.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'CREATE ROLE \"member_20\"%'"))
          .rowCount;
        return n === 20 && waiting === 1 ? n : undefined;
      },
      120_000,
    );
    assert.ok(cluster.crashPod(old) > 0, 'primary processes killed');
    await watcher.end().catch(() => undefined);
    await blocker.end().catch(() => undefined);
    process.stderr.write(`# roles on the old primary when it crashed: ${seen} of ${many.length}\n`);
    assert.equal(seen, 20, 'the crash came in the middle of the pass');
    await eventually(
      'a new primary',
      async () => {
        const s = await status();
        return s.currentPrimary && s.currentPrimary !== old ? s.currentPrimary : undefined;
      },
      120_000,
    );
    await eventually('RolesReconciled True after the failover', async () => (await rolesCondition())?.status === 'True', 180_000);
    const now = (await status()).currentPrimary!;
    process.stderr.write(
      `# the new leader's pass that finished them ran ${(await (await haNodeClientFor(cluster.api, cluster.namespace, name)).managed(await cluster.podIp(now)))?.lastChange?.statements} statements\n`,
    );
    const client = await cluster.direct(now);
    try {
      const found = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_authid r JOIN pg_auth_members m ON m.member = r.oid WHERE r.rolname LIKE 'member\\_%'",
      );
      assert.equal(found.rows[0]?.n, many.length, 'every role, with its membership, on the new primary');
    } finally {
      await client.end().catch(() => undefined);
    }
  });
});
