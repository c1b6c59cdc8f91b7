import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { archiveCurrentWal, authEnv, backupStatus, posixRepositoryDir, takeBackup } from './support.js';
import { currentTimelineSql } from '../../../support/postgres.js';

/**
 * The archive has no gap across a failover: the new primary archives its timeline's history and
 * WAL into the same stanza, and a point-in-time recovery to a moment after the failover follows
 * the new timeline and has every commit made before that moment, on both sides of the failover.
 */
describe('ha-node point-in-time recovery across a failover', { timeout: 300_000 }, () => {
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let source: TestCluster;
  let restored: TestCluster | undefined;
  const repository = (): Record<string, unknown> => ({ kind: 'posix', path: repo.path });

  before(async () => {
    repo = await posixRepositoryDir();
    source = await startCluster({
      members: 2,
      scope: 'fo',
      ttl: 8,
      env: { ...authEnv, KEELSON_BACKUP: JSON.stringify({ stanza: 'fo', repositories: [repository()], archiveTimeout: 30 }) },
    });
  });

  after(async () => {
    await restored?.stop();
    await source?.stop();
    repo?.remove();
  });

  async function streamingReplicas(primary: Member): Promise<number> {
    return (await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length;
  }

  it('restores to a time after the failover: the first two batches, on the new timeline', async () => {
    const first = await source.waitFor('a primary', () => source.primary(), 120_000);
    await source.waitFor('the stanza ready', async () => (await backupStatus(first)).stanzaReady, 90_000);
    await source.waitFor('the replica streaming', async () => (await streamingReplicas(first)) === 1, 90_000);
    await first.query('CREATE TABLE items (id int PRIMARY KEY, batch int)');
    await takeBackup(source, first, 'full');
    // Synchronous in effect: wait until the replica has batch 1 before the primary dies.
    await first.query('INSERT INTO items SELECT g, 1 FROM generate_series(1, 100) g');
    const [{ lsn }] = (await first.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')) as [{ lsn: string }];
    const second = source.members.find((m) => m !== first)!;
    await source.waitFor(
      'the replica replayed batch 1',
      async () => (await second.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn]))[0]?.ok === true,
      30_000,
    );
    first.killPod();
    const promoted = await source.waitFor('the failover', async () => ((await second.isWritable()) ? second : undefined), 90_000);
    await promoted.query('INSERT INTO items SELECT g, 2 FROM generate_series(101, 200) g');
    await new Promise((r) => setTimeout(r, 1100));
    const [{ target }] = (await promoted.query<{ target: string }>(
      'SELECT to_char(clock_timestamp() AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\') AS target',
    )) as [{ target: string }];
    await new Promise((r) => setTimeout(r, 1100));
    await promoted.query('INSERT INTO items SELECT g, 3 FROM generate_series(201, 300) g');
    await archiveCurrentWal(source, promoted);
    const [{ tli }] = (await promoted.query<{ tli: number }>(`SELECT ${currentTimelineSql('tli')}`)) as [{ tli: number }];
    assert.ok(tli >= 2, 'the new primary runs on a new timeline');

    const recovery = { stanza: 'fo', repository: repository(), target: { time: target } };
    restored = await startCluster({
      members: 1,
      scope: 'fo-back',
      api: source.api,
      env: { ...authEnv, KEELSON_BACKUP: JSON.stringify({ stanza: 'fo-back', repositories: [repository()], archiveTimeout: 30, recovery }) },
    });
    const primary = await restored.waitFor('the restored primary', () => restored!.primary(), 150_000);
    const rows = await primary.query<{ batch: number; n: string }>('SELECT batch, count(*)::text AS n FROM items GROUP BY batch ORDER BY batch');
    assert.deepEqual(rows, [
      { batch: 1, n: '100' },
      { batch: 2, n: '100' },
    ]);
    const [restoredTimeline] = await primary.query<{ tli: number }>(`SELECT ${currentTimelineSql('tli')}`);
    assert.ok(restoredTimeline!.tli > tli, 'recovery followed the failover timeline, then forked its own');
  });
});
