import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AckRecorder } from './ack-recorder.js';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { controlledSwap, standbyApiEnv, standbyLeaderOf } from './standby-support.js';

/**
 * The controlled role swap of two clusters on real PostgreSQL 15, under a writer that records
 * every acknowledged commit: `swa` (primary) and `swb` (its standby cluster). swa is demoted by
 * setting standby_cluster to swb's standby leader: its primary stops cleanly, keeps the lock and
 * comes back as standby leader, publishing where its history ends. Once swb has replayed past
 * that shutdown checkpoint, standby_cluster is removed on swb, which promotes. No acknowledged
 * commit is lost, and swa follows swb without a re-clone or a rewind (a file left in its data
 * directory survives, its system identifier is kept).
 */
describe('ha-node controlled swap of a primary and a standby cluster', { timeout: 400_000 }, () => {
  let primaryCluster: TestCluster;
  let standbyCluster: TestCluster;
  let oldPrimary: Member;
  let standbyLeader: Member;

  before(async () => {
    primaryCluster = await startCluster({ members: 2, ttl: 8, loopWait: 1, retryTimeout: 3, scope: 'swa', env: standbyApiEnv });
    oldPrimary = await primaryCluster.waitFor('the primary of swa', () => primaryCluster.primary(), 120_000);
    await oldPrimary.query('CREATE TABLE acked (id int PRIMARY KEY)');
    const bootstrap = { standby_cluster: { host: oldPrimary.ip, port: oldPrimary.pgPort } };
    standbyCluster = await startCluster({
      members: 2,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'swb',
      api: primaryCluster.api,
      env: { ...standbyApiEnv, KEELSON_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap) },
    });
    standbyLeader = await standbyCluster.waitFor('the standby leader of swb', () => standbyLeaderOf(standbyCluster.members), 180_000);
    await standbyCluster.waitFor(
      'swb running',
      async () => (await Promise.all(standbyCluster.members.map((m) => m.status('/health')))).every((c) => c === 200),
      120_000,
    );
  });

  after(async () => {
    await standbyCluster?.stop();
    await primaryCluster?.stop();
  });

  it('swaps the roles with no acknowledged commit lost and no re-clone of the old primary', async () => {
    const systemBefore = (await oldPrimary.get('/ha')).json().database_system_identifier;
    const marker = join(oldPrimary.dataDir, 'keelson-swap-marker');
    writeFileSync(marker, 'kept unless the data directory is cloned or rewound\n');
    const writer = new AckRecorder([...primaryCluster.members, ...standbyCluster.members]);
    await primaryCluster.waitFor('writes before the swap', async () => writer.acked.length >= 20, 30_000);

    const demotion = await controlledSwap(oldPrimary, standbyLeader, (what, check, ms) => primaryCluster.waitFor(what, check, ms));
    assert.equal(demotion.database_system_identifier, systemBefore);
    await primaryCluster.waitFor('swa led by a standby leader', async () => (await oldPrimary.status('/standby-leader')) === 200, 60_000);
    const ackedAtPromotion = writer.acked.length;
    await standbyCluster.waitFor('writes after the swap', async () => writer.acked.length >= ackedAtPromotion + 20, 60_000);
    const acked = await writer.stop();
    console.log(`controlled swap: ${acked.length} acknowledged writes, longest gap ${writer.longestGapMs().toFixed(0)} ms`);

    const present = new Set((await standbyLeader.query<{ id: number }>('SELECT id FROM acked')).map((r) => r.id));
    assert.deepEqual(
      acked.filter((id) => !present.has(id)),
      [],
      'every acknowledged commit is on the new primary',
    );
    const newTimeline = (await standbyLeader.get('/ha')).json().timeline as number;
    assert.ok(newTimeline > demotion.timeline, `swb promoted onto timeline ${newTimeline}`);

    for (const member of primaryCluster.members) {
      await primaryCluster.waitFor(
        `${member.name} has every row of swb`,
        async () => (await member.query<{ n: number }>('SELECT count(*)::int AS n FROM acked'))[0]?.n === present.size,
        60_000,
      );
      await primaryCluster.waitFor(`${member.name} on swb's timeline`, async () => (await member.get('/ha')).json().timeline === newTimeline, 30_000);
    }
    const receiver = await oldPrimary.query<{ sender_port: number; status: string }>('SELECT sender_port, status FROM pg_stat_wal_receiver');
    assert.deepEqual(
      receiver.map((r) => [r.sender_port, r.status]),
      [[standbyLeader.pgPort, 'streaming']],
      'the old primary streams from the new one',
    );
    assert.equal(existsSync(marker), true, "the old primary's data directory was neither cloned nor rewound");
    assert.equal((await oldPrimary.get('/ha')).json().database_system_identifier, systemBefore);
    assert.doesNotMatch(oldPrimary.log(), /pg_rewind finished|re-cloning/);
    assert.equal(await oldPrimary.status('/standby-leader'), 200, 'swa stays a standby cluster, led by its old primary');
  });
});
