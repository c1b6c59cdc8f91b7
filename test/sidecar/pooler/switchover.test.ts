import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { callMember, type ClientOptions } from '../../../sidecar/ha-node/ctl/client.js';
import { startCluster, type Member, type TestCluster } from '../ha-node/harness.js';
import { settled } from '../ha-node/traffic.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from './support.js';

/**
 * A planned switchover behind a real PgBouncer: ha-node on the old primary pauses the pooler
 * before its server stops, points it at the new primary once that one takes writes, and resumes
 * it. A client querying every 20 ms sees no error. A pause that cannot finish (a transaction held
 * open) aborts the switchover with its reason, and the pooler is resumed.
 */
const credentials = { username: 'keelson', password: 'pooler-api-secret' };
const api: ClientOptions = { credentials, timeoutMs: 40_000 };
const appUser = 'shop';
const appPassword = 'shop-secret';

describe('pooler around a planned switchover', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let pooler: TestPooler;
  let primary: Member;
  const dir = scratchDir();

  before(async () => {
    const passwordFile = poolerPasswordFile(dir, 'pooler-role-secret');
    const { freePort } = await import('../../support/ports.js');
    const controlPort = await freePort('127.0.0.1');
    cluster = await startCluster({
      members: 2,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'pooled',
      env: {
        KEELSON_API_USERNAME: credentials.username,
        KEELSON_API_PASSWORD: credentials.password,
        KEELSON_POOLERS: `127.0.0.1:${controlPort}`,
        KEELSON_POOLER_PASSWORD_FILE: passwordFile,
        KEELSON_POOLER_PAUSE_TIMEOUT: '2',
      },
    });
    primary = await settled(cluster, 1);
    await cluster.waitFor('the pooler lookup function in the app database', async () => {
      const rows = await primary.query<{ f: string | null }>("SELECT to_regprocedure('keelson_pooler.user_lookup(text)')::text AS f").catch(() => []);
      const inApp = await primary.query<{ n: string }>(`SELECT count(*) AS n FROM pg_database WHERE datname = 'app'`);
      return rows[0]?.f && inApp[0]?.n === '1';
    }, 60_000);
    await primary.query(`CREATE ROLE ${appUser} LOGIN PASSWORD '${appPassword}'`);
    const { default: pgModule } = await import('pg');
    const admin = new pgModule.Client({ connectionString: primary.pgUrl.replace(/\/postgres$/, '/app') });
    await admin.connect();
    await admin.query(`CREATE TABLE ticks (id bigserial PRIMARY KEY, at timestamptz DEFAULT now()); GRANT ALL ON ticks, ticks_id_seq TO ${appUser}`);
    await admin.end();
    pooler = await startTestPooler({ baseDir: dir, target: { host: primary.ip, port: primary.pgPort }, passwordFile, credentials, controlPort });
  });

  after(async () => {
    await pooler?.running.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates an application role through auth_query, and refuses the superuser', async () => {
    const client = await pooler.client(appUser, appPassword, 'app');
    assert.equal((await client.query<{ u: string }>('SELECT current_user AS u')).rows[0]?.u, appUser);
    await client.end();
    await assert.rejects(pooler.client(appUser, 'wrong', 'app'), /password|authentication/i);
    // The lookup function returns no superuser, so PgBouncer turns the login away (1.18 says "bouncer config error").
    await assert.rejects(pooler.client('postgres', 'super-secret-test', 'app'), /password|authentication|config error/i);
  });

  it('a PAUSE that cannot finish aborts the switchover with its reason and resumes the pooler', async () => {
    const holder = await pooler.client(appUser, appPassword, 'app');
    await holder.query('BEGIN');
    await holder.query('INSERT INTO ticks DEFAULT VALUES');
    const candidate = cluster.members.find((m) => m !== primary)!;
    const reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, api);
    assert.equal(reply.status, 503, reply.text);
    assert.match(reply.text, /PAUSE did not finish within 2000 ms/);
    const state = await pooler.running.control.state();
    assert.equal(state.paused, false, 'the pooler was resumed');
    assert.equal((await cluster.primary())?.name, primary.name, 'the old primary is still the primary');
    await holder.query('COMMIT');
    await holder.end();
    const client = await pooler.client(appUser, appPassword, 'app');
    assert.equal((await client.query('INSERT INTO ticks DEFAULT VALUES RETURNING id')).rowCount, 1);
    await client.end();
  });

  it('a client querying every 20 ms and four busy writers through the pooler see no failure during a switchover', async () => {
    const candidate = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor('a streaming replica', async () => (await candidate.status('/replica?replication_state=streaming')) === 200, 60_000);
    const client: pg.Client = await pooler.client(appUser, appPassword, 'app');
    const acknowledged: number[] = [];
    const failures: string[] = [];
    let longestStallMs = 0;
    let running = true;
    const load = (async () => {
      while (running) {
        const startedAt = performance.now();
        try {
          const result = await client.query<{ id: string }>('INSERT INTO ticks DEFAULT VALUES RETURNING id');
          acknowledged.push(Number(result.rows[0]!.id));
        } catch (error) {
          failures.push((error as Error).message);
        }
        longestStallMs = Math.max(longestStallMs, performance.now() - startedAt);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // Busy writers keep transactions in flight (30 ms each), as a loaded application does: the
    // fast shutdown of the old primary would break those without the PAUSE.
    const busy = await Promise.all([1, 2, 3, 4].map(() => pooler.client(appUser, appPassword, 'app')));
    const busyLoads = busy.map(async (c) => {
      while (running) {
        try {
          const results = (await c.query('BEGIN; INSERT INTO ticks DEFAULT VALUES RETURNING id; SELECT pg_sleep(0.03); COMMIT')) as unknown as pg.QueryResult<{ id: string }>[];
          acknowledged.push(Number(results[1]!.rows[0]!.id));
        } catch (error) {
          failures.push(`busy: ${(error as Error).message}`);
        }
      }
    });
    let reply: Awaited<ReturnType<typeof callMember>>;
    try {
      await new Promise((r) => setTimeout(r, 500));
      reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, api);
      await cluster.waitFor('the pooler pointed at the new primary', async () => (await pooler.running.control.state()).target.port === candidate.pgPort, 20_000);
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      running = false;
      await Promise.all([load, ...busyLoads]);
      await Promise.all([client, ...busy].map((c) => c.end().catch(() => undefined)));
    }
    assert.equal(reply.status, 200, reply.text);
    process.stderr.write(`# through the pooler: ${acknowledged.length} acknowledged inserts, ${failures.length} failed, longest stall of the 20 ms client ${Math.round(longestStallMs)} ms\n`);
    assert.deepEqual(failures, [], 'no query failed');
    const state = await pooler.running.control.state();
    assert.deepEqual(state, { paused: false, target: { host: candidate.ip, port: candidate.pgPort } });
    assert.equal((await cluster.primary())?.name, candidate.name);
    const { default: pgModule } = await import('pg');
    const direct = new pgModule.Client({ connectionString: candidate.pgUrl.replace(/\/postgres$/, '/app') });
    await direct.connect();
    const present = await direct.query<{ n: string }>('SELECT count(*) AS n FROM ticks WHERE id = ANY($1::bigint[])', [acknowledged]);
    await direct.end();
    assert.equal(Number(present.rows[0]!.n), acknowledged.length, 'every acknowledged insert is on the new primary');
  });

  it('follows an unplanned failover: the new leader points the pooler at itself', async () => {
    const current = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const survivor = cluster.members.find((m) => m !== current)!;
    await cluster.waitFor('a streaming replica', async () => (await survivor.status('/replica?replication_state=streaming')) === 200, 60_000);
    current.killPod();
    await cluster.waitFor(`${survivor.name} promoted`, async () => (await survivor.isWritable()) || undefined, 60_000);
    await cluster.waitFor('the pooler pointed at the survivor', async () => (await pooler.running.control.state()).target.port === survivor.pgPort, 10_000);
    const rows = await cluster.waitFor('a query through the pooler', async () => {
      const client = await pooler.client(appUser, appPassword, 'app');
      try {
        return (await client.query('INSERT INTO ticks DEFAULT VALUES RETURNING id')).rowCount;
      } finally {
        await client.end();
      }
    }, 20_000);
    assert.equal(rows, 1);
  });
});
