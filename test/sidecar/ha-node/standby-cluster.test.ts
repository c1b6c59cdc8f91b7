import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { metric, patchConfig, standbyApiEnv as apiEnv, standbyLeaderOf } from './standby-support.js';

async function count(member: Member): Promise<number> {
  return Number((await member.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n);
}

/**
 * A standby cluster on real PostgreSQL 15: a one-member source cluster and a three-member standby
 * cluster (bootstrapped with standby_cluster pointing at the source's PostgreSQL) on the same API
 * server stand-in. The standby leader follows the source and never promotes, the others cascade
 * from it; a killed standby leader is replaced by another standby leader; removing
 * standby_cluster promotes onto a new timeline with the data intact.
 */
describe('ha-node standby cluster', { timeout: 400_000 }, () => {
  let source: TestCluster;
  let standby: TestCluster;
  let sourcePrimary: Member;
  let leader: Member;

  before(async () => {
    source = await startCluster({ members: 1, ttl: 8, loopWait: 1, retryTimeout: 3, scope: 'src', env: apiEnv });
    sourcePrimary = await source.waitFor('the source primary', () => source.primary(), 120_000);
    await sourcePrimary.query('CREATE TABLE items (id int PRIMARY KEY, note text)');
    await sourcePrimary.query("INSERT INTO items VALUES (1, 'before the standby')");
    const bootstrap = { standby_cluster: { host: sourcePrimary.ip, port: sourcePrimary.pgPort } };
    standby = await startCluster({
      members: 3,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'stb',
      api: source.api,
      env: { ...apiEnv, KEELSON_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap) },
    });
  });

  after(async () => {
    await standby?.stop();
    await source?.stop();
  });

  const standbyLeader = (): Promise<Member | undefined> => standbyLeaderOf(standby.members);

  async function rowsEverywhere(members: Member[], rows: number): Promise<void> {
    for (const member of members) await standby.waitFor(`${rows} rows on ${member.name}`, async () => (await count(member)) === rows, 60_000);
  }

  it('follows the source: rows written there reach every standby member, none writable', async () => {
    leader = await standby.waitFor('a standby leader', () => standbyLeader(), 180_000);
    await standby.waitFor(
      'three running members',
      async () => (await Promise.all(standby.members.map((m) => m.status('/health')))).every((c) => c === 200),
      120_000,
    );
    await sourcePrimary.query("INSERT INTO items VALUES (2, 'after the standby')");
    await rowsEverywhere(standby.members, 2);
    for (const member of standby.members) assert.equal(await member.isWritable(), false, `${member.name} is read-only`);
    assert.equal(await standby.leaderName(), leader.name);
    const receivers = await leader.query<{ sender_port: number }>('SELECT sender_port FROM pg_stat_wal_receiver');
    assert.equal(receivers[0]?.sender_port, sourcePrimary.pgPort, 'the standby leader streams from the source');
    for (const member of standby.members.filter((m) => m !== leader)) {
      await standby.waitFor(
        `${member.name} cascading from the standby leader`,
        async () => {
          const rows = await member.query<{ sender_port: number; status: string }>('SELECT sender_port, status FROM pg_stat_wal_receiver');
          return rows[0]?.sender_port === leader.pgPort && rows[0]?.status === 'streaming';
        },
        60_000,
      );
    }
    const sourceIdentity = (await sourcePrimary.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id;
    assert.equal((await leader.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id, sourceIdentity);
  });

  it('answers the health endpoints, documents and metrics of each role', async () => {
    const replicas = standby.members.filter((m) => m !== leader);
    const expected: Record<string, [number, number]> = {
      '/standby-leader': [200, 503],
      '/standby_leader': [200, 503],
      '/leader': [200, 503],
      '/read-only': [200, 200],
      '/primary': [503, 503],
      '/': [503, 503],
      '/read-write': [503, 503],
      '/replica': [503, 200],
      '/readiness': [200, 200],
    };
    for (const [path, [onLeader, onReplica]] of Object.entries(expected)) {
      assert.equal(await leader.status(path), onLeader, `${path} on the standby leader`);
      for (const replica of replicas)
        await standby.waitFor(`${path} ${onReplica} on ${replica.name}`, async () => (await replica.status(path)) === onReplica, 20_000);
    }
    assert.equal((await leader.get('/ha')).json().role, 'standby_leader');
    for (const replica of replicas) assert.equal((await replica.get('/ha')).json().role, 'replica');
    assert.equal(await metric(leader, 'ha_standby_leader'), 1);
    assert.equal(await metric(leader, 'ha_primary'), 0);
    assert.equal(await metric(leader, 'ha_replica'), 0);
    for (const replica of replicas) {
      assert.equal(await metric(replica, 'ha_standby_leader'), 0);
      assert.equal(await metric(replica, 'ha_replica'), 1);
    }
    const doc = (await leader.get('/cluster')).json() as { members: { name: string; role: string }[] };
    assert.deepEqual(
      doc.members.map((m) => [m.name, m.role]),
      standby.members.map((m) => [m.name, m === leader ? 'standby_leader' : 'replica']),
    );
    assert.equal(await sourcePrimary.status('/standby-leader'), 503, 'the source primary is no standby leader');
    assert.equal(await sourcePrimary.status('/primary'), 200);
  });

  it('refuses a malformed standby_cluster with 400 naming the field and keeps the configuration', async () => {
    const before = (await leader.get('/config')).json();
    for (const [body, field] of [
      [{ standby_cluster: { host: sourcePrimary.ip, port: 70000 } }, 'standby_cluster.port'],
      [{ standby_cluster: { host: 'a b' } }, 'standby_cluster.host'],
      [{ standby_cluster: { restore_command: 'cp %p\nx' } }, 'standby_cluster.restore_command'],
      [{ standby_cluster: { colour: 'blue' } }, 'standby_cluster.colour'],
      [{ standby_cluster: 'yes' }, 'standby_cluster'],
    ] as const) {
      const r = await patchConfig(leader, body);
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, new RegExp(`"${field.replace('.', '\\.')}"`));
    }
    assert.deepEqual((await leader.get('/config')).json(), before);
  });

  it('hands the standby leadership over on POST /switchover; the new standby leader follows the source', async () => {
    const old = leader;
    const candidate = standby.members.find((m) => m !== old)!;
    const response = await fetch(`${old.apiUrl}/switchover`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${Buffer.from(`${apiEnv.KEELSON_API_USERNAME}:${apiEnv.KEELSON_API_PASSWORD}`).toString('base64')}`,
      },
      body: JSON.stringify({ leader: old.name, candidate: candidate.name }),
      signal: AbortSignal.timeout(70_000),
    });
    assert.equal(response.status, 200, await response.text());
    leader = await standby.waitFor(
      'the candidate as standby leader',
      async () => ((await standbyLeaderOf(standby.members)) === candidate ? candidate : undefined),
      60_000,
    );
    await standby.waitFor(`${old.name} back as a replica`, async () => (await old.status('/replica')) === 200, 60_000);
    await sourcePrimary.query("INSERT INTO items VALUES (10, 'after the switchover')");
    await rowsEverywhere(standby.members, 3);
    await sourcePrimary.query('DELETE FROM items WHERE id = 10');
    await rowsEverywhere(standby.members, 2);
    for (const member of standby.members) assert.equal(await member.isWritable(), false, `${member.name} is still read-only`);
  });

  it('replaces a killed standby leader with another that keeps following the source', async () => {
    const old = leader;
    old.killPod();
    const survivors = standby.members.filter((m) => m !== old);
    leader = await standby.waitFor(
      'a new standby leader',
      async () => {
        const next = await standbyLeader();
        return next && next !== old ? next : undefined;
      },
      120_000,
    );
    assert.ok(survivors.includes(leader));
    await sourcePrimary.query("INSERT INTO items VALUES (3, 'after the failover')");
    await rowsEverywhere(survivors, 3);
    for (const member of survivors) assert.equal(await member.isWritable(), false, `${member.name} is still read-only`);
    old.start();
    await standby.waitFor(`${old.name} back as a replica`, async () => (await old.status('/replica')) === 200, 120_000);
    await rowsEverywhere([old], 3);
  });

  it('promotes on PATCH standby_cluster null: writable, on a new timeline, data identical', async () => {
    const timelineBefore = (await leader.query<{ t: number }>('SELECT timeline_id AS t FROM pg_control_checkpoint()'))[0]!.t;
    const sourceRows = await sourcePrimary.query<{ id: number; note: string }>('SELECT id, note FROM items ORDER BY id');
    const r = await patchConfig(leader, { standby_cluster: null });
    assert.equal(r.status, 200, r.text);
    const primary = await standby.waitFor(
      'a writable primary',
      async () => {
        const found = await standby.primary();
        return found && (await found.isWritable()) ? found : undefined;
      },
      90_000,
    );
    assert.equal(primary, leader, 'the standby leader itself is promoted');
    const timeline = (await primary.get('/ha')).json().timeline as number;
    assert.ok(timeline > timelineBefore, `timeline ${timeline} after ${timelineBefore}`);
    assert.equal(await primary.status('/standby-leader'), 503);
    assert.equal(await metric(primary, 'ha_standby_leader'), 0);
    assert.deepEqual(await primary.query('SELECT id, note FROM items ORDER BY id'), sourceRows);
    await primary.query("INSERT INTO items VALUES (4, 'written on the promoted cluster')");
    await rowsEverywhere(standby.members, 4);
    assert.equal(await count(sourcePrimary), 3, "the source does not see the promoted cluster's writes");
  });
});
