import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * What an application sees of a running cluster: the owner role and database exist with the
 * password of the mounted Secret (here a file), a changed password takes effect without a
 * restart, db.pg_hba reaches pg_hba.conf on every member (a bad line is refused by PATCH /config,
 * naming it), and a new primary after a failover puts a missing role and database back.
 */
const user = 'hba-admin';
const apiPassword = 'hba-api-password';
const auth = { Authorization: `Basic ${Buffer.from(`${user}:${apiPassword}`).toString('base64')}`, 'Content-Type': 'application/json' };
const firstPassword = 'first-app-password';
const secondPassword = 'second-app-password';

async function connectAs(member: Member, username: string, password: string, database: string): Promise<string> {
  const client = new pg.Client({ host: member.ip, port: member.pgPort, user: username, password, database, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ who: string }>('SELECT current_user AS who');
    return `ok:${rows[0]?.who}`;
  } catch (error) {
    return `error:${(error as Error).message}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function patchConfig(member: Member, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${member.apiUrl}/config`, { method: 'PATCH', headers: auth, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

describe('ha-node application access', { timeout: 240_000 }, () => {
  let cluster: TestCluster;
  let secretDir: string;
  let passwordFile: string;
  let primary: Member;
  let replica: Member;

  before(async () => {
    secretDir = mkdtempSync(join(tmpdir(), 'keelson-app-secret-'));
    passwordFile = join(secretDir, 'password');
    writeFileSync(passwordFile, firstPassword);
    cluster = await startCluster({
      members: 2,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'appaccess',
      env: {
        KEELSON_API_USERNAME: user,
        KEELSON_API_PASSWORD: apiPassword,
        KEELSON_DATABASE: 'shop',
        KEELSON_APP_OWNER: 'shopper',
        KEELSON_APP_PASSWORD_FILE: passwordFile,
      },
    });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    replica = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor('the replica streaming', async () => (await replica.status('/replica?replication_state=streaming')) === 200, 120_000);
  });

  after(async () => {
    await cluster?.stop();
    if (secretDir) rmSync(secretDir, { recursive: true, force: true });
  });

  it('creates the owner role and its database at bootstrap; the Secret password logs in over TCP', async () => {
    assert.equal(await connectAs(primary, 'shopper', firstPassword, 'shop'), 'ok:shopper');
    const rows = await primary.query<{ owner: string }>("SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'shop'");
    assert.equal(rows[0]?.owner, 'shopper');
    const client = new pg.Client({ host: primary.ip, port: primary.pgPort, user: 'shopper', password: firstPassword, database: 'shop' });
    await client.connect();
    try {
      await client.query('CREATE TABLE orders (id int PRIMARY KEY)');
    } finally {
      await client.end();
    }
    assert.match(await connectAs(primary, 'shopper', 'wrong', 'shop'), /password authentication failed/);
  });

  it('follows a changed password file without a restart, and never logs the password', async () => {
    const started = (await primary.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t'))[0]?.t;
    writeFileSync(passwordFile, secondPassword);
    await cluster.waitFor('the new password to work', async () => (await connectAs(primary, 'shopper', secondPassword, 'shop')) === 'ok:shopper', 30_000);
    assert.match(await connectAs(primary, 'shopper', firstPassword, 'shop'), /password authentication failed/);
    assert.equal((await primary.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t'))[0]?.t, started);
    for (const member of cluster.members) {
      const logs = member.log() + readFileSync(join(member.baseDir, 'data', 'postgresql.log'), 'utf8');
      assert.ok(!logs.includes(firstPassword) && !logs.includes(secondPassword), `${member.name} logged a password`);
    }
  });

  it('applies db.pg_hba on every member after the rules ha-node needs, and reloads', async () => {
    const lines = ['host shop shopper 127.0.0.0/8 scram-sha-256', 'host all all 0.0.0.0/0 reject'];
    const result = await patchConfig(primary, { db: { pg_hba: lines } });
    assert.equal(result.status, 200, result.text);
    await cluster.waitFor(
      'the owner shut out of the postgres database',
      async () => /rejects connection/.test(await connectAs(primary, 'shopper', secondPassword, 'postgres')),
      30_000,
    );
    assert.equal(await connectAs(primary, 'shopper', secondPassword, 'shop'), 'ok:shopper');
    assert.equal(await connectAs(primary, 'postgres', 'super-secret-test', 'postgres'), 'ok:postgres', 'the superuser rule comes first');
    await cluster.waitFor(
      'the replica file to carry the lines',
      async () => readFileSync(join(replica.dataDir, 'pg_hba.conf'), 'utf8').includes(lines[1]!),
      30_000,
    );
    await cluster.waitFor(
      'the replica to reject the owner',
      async () => /rejects connection/.test(await connectAs(replica, 'shopper', secondPassword, 'postgres')),
      30_000,
    );
    const rules = await primary.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_hba_file_rules WHERE error IS NOT NULL');
    assert.equal(rules[0]?.n, 0);
    assert.equal(await replica.status('/replica?replication_state=streaming'), 200, 'replication keeps its rule');
  });

  it('refuses a line PostgreSQL would reject with a 400 naming it, and stores nothing', async () => {
    const before = await primary.get('/config');
    const result = await patchConfig(primary, { db: { pg_hba: ['host all all 0.0.0.0/0 scram-sha-256', 'host all all 10.0.0.0/33 md5'] } });
    assert.equal(result.status, 400);
    assert.match(result.text, /db\.pg_hba\[1\]/);
    assert.match(result.text, /10\.0\.0\.0\/33/);
    assert.deepEqual((await primary.get('/config')).json(), before.json());
  });

  it('after a failover the new primary recreates a missing owner role and database', async () => {
    await primary.query('DROP DATABASE shop');
    await primary.query('DROP ROLE shopper');
    await cluster.waitFor('the drop replayed', async () => (await replica.query("SELECT 1 FROM pg_roles WHERE rolname = 'shopper'")).length === 0, 30_000);
    primary.killPod();
    await cluster.waitFor('the replica promoted', async () => (await cluster.primary()) === replica, 60_000);
    await cluster.waitFor(
      'the owner back with its password',
      async () => (await connectAs(replica, 'shopper', secondPassword, 'shop')) === 'ok:shopper',
      30_000,
    );
  });
});
