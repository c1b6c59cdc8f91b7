import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AckRecorder } from './ack-recorder.js';
import { startCluster, type TestCluster } from './harness.js';

const auth = `Basic ${Buffer.from('q-admin:q-password').toString('base64')}`;

/**
 * Quorum commit on real PostgreSQL 15: with `ANY 1` over two voters and quorum 1, the primary pod
 * is killed twice while a writer records acknowledged ids; a voter that can prove it has every
 * acknowledged commit takes over each time, and every acknowledged id is on the final primary.
 */
describe('ha-node quorum commit across failovers', { timeout: 240_000 }, () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster({
      members: 3,
      ttl: 6,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'quorumy',
      env: { KEELSON_API_USERNAME: 'q-admin', KEELSON_API_PASSWORD: 'q-password' },
    });
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    await primary.query('CREATE TABLE acked (id int PRIMARY KEY)');
    const r = await fetch(`${primary.apiUrl}/config`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', Authorization: auth },
      body: JSON.stringify({ synchronous_mode: 'quorum' }),
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(r.status, 200, await r.text());
  });

  after(async () => {
    await cluster?.stop();
  });

  async function quorumKey(leader: string): Promise<Record<string, string> | undefined> {
    const key = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-sync`)?.metadata?.annotations;
    return key?.leader === leader && key.quorum === '1' && key.sync_standby?.split(',').length === 2 ? key : undefined;
  }

  it('loses no acknowledged commit when a voter takes over, twice', async () => {
    const writer = new AckRecorder(cluster.members);
    try {
      for (let round = 1; round <= 2; round += 1) {
        const primary = await cluster.waitFor('a primary', () => cluster.primary(), 60_000);
        const key = await cluster.waitFor(`round ${round}: voters and quorum of ${primary.name}`, () => quorumKey(primary.name), 40_000);
        const [names] = await primary.query<{ v: string }>("SELECT current_setting('synchronous_standby_names') AS v");
        assert.match(names!.v, /^ANY 1 \(/, `round ${round}`);
        const before = writer.acked.length;
        await cluster.waitFor('writes flowing', async () => writer.acked.length > before + 20, 20_000);
        primary.killPod();
        const next = await cluster.waitFor(
          `round ${round}: a new primary`,
          async () => {
            for (const m of cluster.members) if (m !== primary && (await m.isWritable())) return m;
            return undefined;
          },
          60_000,
        );
        assert.ok(key.sync_standby!.split(',').includes(next.name), `round ${round}: ${next.name} was a voter (${key.sync_standby})`);
        primary.start();
        await cluster.waitFor(`${primary.name} streaming again`, async () => (await primary.status('/replica?replication_state=streaming')) === 200, 90_000);
      }
    } finally {
      await writer.stop();
    }
    assert.ok(writer.acked.length > 40, `${writer.acked.length} commits acknowledged`);
    const primary = (await cluster.primary())!;
    const present = new Set((await primary.query<{ id: number }>('SELECT id FROM acked')).map((r) => r.id));
    assert.deepEqual(
      writer.acked.filter((id) => !present.has(id)),
      [],
      'acknowledged ids missing after failovers',
    );
  });
});
