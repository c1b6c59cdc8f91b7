import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * Synchronous mode: a writer records every id whose INSERT was acknowledged while the primary pod
 * is killed twice; every acknowledged id must be on the final primary.
 */
describe('ha-node synchronous mode', { timeout: 200_000 }, () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster({ members: 3, ttl: 6, loopWait: 1, retryTimeout: 2, scope: 'syncy', env: { KEELSON_SYNCHRONOUS_MODE: 'true' } });
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    await primary.query('CREATE TABLE acked (id int PRIMARY KEY)');
  });

  after(async () => {
    await cluster?.stop();
  });

  async function syncStandby(): Promise<string | undefined> {
    const lease = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-sync`);
    return lease?.metadata?.annotations?.sync_standby || undefined;
  }

  /** Inserts ids one by one into whichever member is primary; returns the acknowledged ones when stopped. */
  function startWriter(): { stop: () => Promise<number[]>; acked: number[] } {
    const acked: number[] = [];
    let running = true;
    let client: pg.Client | undefined;
    const connect = async (): Promise<pg.Client | undefined> => {
      for (const member of cluster.members) {
        const candidate = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 1000, query_timeout: 20_000 });
        candidate.on('error', () => undefined);
        try {
          await candidate.connect();
          const rows = await candidate.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
          if (rows.rows[0]?.r === false) return candidate;
        } catch {
          // try the next member
        }
        await candidate.end().catch(() => undefined);
      }
      return undefined;
    };
    const done = (async () => {
      let next = 1;
      while (running) {
        client ??= await connect();
        if (!client) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        const id = next;
        next += 1;
        try {
          await client.query('INSERT INTO acked VALUES ($1)', [id]);
          acked.push(id);
        } catch {
          await client.end().catch(() => undefined);
          client = undefined;
        }
      }
      await client?.end().catch(() => undefined);
    })();
    return {
      acked,
      stop: async () => {
        running = false;
        await done;
        return acked;
      },
    };
  }

  it('keeps a synchronous standby in the DCS and in synchronous_standby_names', async () => {
    const standby = await cluster.waitFor('a published synchronous standby', syncStandby, 40_000);
    const primary = (await cluster.primary())!;
    const [{ names }] = await primary.query<{ names: string }>("SELECT current_setting('synchronous_standby_names') AS names");
    assert.equal(names, `FIRST 1 ("${standby}")`);
    const member = cluster.members.find((m) => m.name === standby)!;
    await cluster.waitFor('/sync on the standby', async () => (await member.status('/sync')) === 200, 10_000);
    assert.equal(await member.status('/async'), 503);
    const other = cluster.members.find((m) => m !== member && m !== primary)!;
    assert.equal(await other.status('/sync'), 503);
    // The third member may still be starting its stream when the first standby is named.
    await cluster.waitFor('/async on the other replica', async () => (await other.status('/async')) === 200, 20_000);
    assert.equal(await other.status('/sync'), 503);
    const rows = await primary.query<{ application_name: string; sync_state: string }>('SELECT application_name, sync_state FROM pg_stat_replication');
    assert.equal(rows.find((r) => r.application_name === standby)?.sync_state, 'sync');
  });

  it('loses no acknowledged commit across repeated failovers', async () => {
    const writer = startWriter();
    try {
      for (let round = 0; round < 2; round += 1) {
        const primary = await cluster.waitFor('a primary', () => cluster.primary(), 60_000);
        const standby = await cluster.waitFor(
          'a published synchronous standby',
          async () => {
            const name = await syncStandby();
            const lease = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-sync`);
            return name && lease?.metadata?.annotations?.leader === primary.name ? name : undefined;
          },
          40_000,
        );
        const before = writer.acked.length;
        await cluster.waitFor('writes flowing', async () => writer.acked.length > before + 20, 20_000);
        primary.killPod();
        const survivors = cluster.members.filter((m) => m !== primary);
        const next: Member = await cluster.waitFor(
          'a new primary',
          async () => {
            for (const m of survivors) if (await m.isWritable()) return m;
            return undefined;
          },
          60_000,
        );
        assert.equal(next.name, standby, 'the synchronous standby took over');
        primary.start();
        await cluster.waitFor(`${primary.name} streaming again`, async () => (await primary.status('/replica?replication_state=streaming')) === 200, 60_000);
      }
    } finally {
      await writer.stop();
    }
    const acked = writer.acked;
    assert.ok(acked.length > 40, `${acked.length} commits acknowledged`);
    const primary = (await cluster.primary())!;
    const present = new Set((await primary.query<{ id: number }>('SELECT id FROM acked')).map((r) => r.id));
    const lost = acked.filter((id) => !present.has(id));
    assert.deepEqual(lost, [], `acknowledged ids missing after failovers`);
  });
});
