import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { posixBackupSettings, refusedRestore, sourceWithFirstBatch } from './pitr-support.js';
import { archiveCurrentWal, authEnv, backupStatus, posixRepositoryDir, type BackupListing } from './support.js';
import { currentTimelineSql } from '../../../support/postgres.js';

/**
 * Point-in-time recovery into a NEW cluster from a filesystem repository: rows in three batches,
 * a time noted between the second and the third, the table dropped, then a restore to that time.
 * The restored cluster archives into its own stanza; the source's stays untouched.
 */
describe('ha-node point-in-time recovery (pgBackRest, posix repository)', { timeout: 300_000 }, () => {
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let source: TestCluster;
  let restored: TestCluster | undefined;
  let sourcePrimary: Member;
  let target: string;
  let firstBackupEnd: string;
  let config: ReturnType<typeof posixBackupSettings>;

  before(async () => {
    repo = await posixRepositoryDir();
    config = posixBackupSettings(repo.path, 'src');
    source = await startCluster({ members: 1, scope: 'src', env: { ...authEnv, KEELSON_BACKUP: config('src') } });
    let full: BackupListing;
    ({ primary: sourcePrimary, full } = await sourceWithFirstBatch(source));
    firstBackupEnd = full.info!.backups[0]!.stoppedAt;
    await sourcePrimary.query('INSERT INTO items SELECT g, 2 FROM generate_series(101, 200) g');
    await new Promise((r) => setTimeout(r, 1100));
    [{ target }] = (await sourcePrimary.query<{ target: string }>(
      'SELECT to_char(clock_timestamp() AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\') AS target',
    )) as [{ target: string }];
    await new Promise((r) => setTimeout(r, 1100));
    await sourcePrimary.query('INSERT INTO items SELECT g, 3 FROM generate_series(201, 300) g');
    await sourcePrimary.query('DROP TABLE items');
    await archiveCurrentWal(source, sourcePrimary);
  });

  after(async () => {
    await restored?.stop();
    await source?.stop();
    repo?.remove();
  });

  async function startRestored(scope: string, stanza: string, recovery: Record<string, unknown>, members = 1): Promise<TestCluster> {
    return startCluster({ members, scope, api: source.api, env: { ...authEnv, KEELSON_BACKUP: config(stanza, recovery) } });
  }

  it('restores a new cluster to the noted time: exactly the first two batches, on a new timeline, replicas cloned from it', async () => {
    restored = await startRestored('restored', 'restored', { target: { time: target } }, 2);
    const primary = await restored.waitFor('the restored primary', () => restored!.primary(), 120_000);
    const rows = await primary.query<{ batch: number; n: string }>('SELECT batch, count(*)::text AS n FROM items GROUP BY batch ORDER BY batch');
    assert.deepEqual(rows, [
      { batch: 1, n: '100' },
      { batch: 2, n: '100' },
    ]);
    const [timeline] = await primary.query<{ tli: number }>(`SELECT ${currentTimelineSql('tli')}`);
    assert.ok(timeline!.tli > 1, 'the restored cluster promoted onto a new timeline');
    const replica = restored.members.find((m) => m !== primary)!;
    await restored.waitFor(
      'the replica has the restored rows',
      async () => (await replica.query<{ n: string }>('SELECT count(*)::text AS n FROM items'))[0]?.n === '200',
      90_000,
    );
    // Its own stanza, with its own archiving; the source stanza got nothing of the new timeline.
    await restored.waitFor('the restored stanza ready', async () => (await backupStatus(primary)).stanzaReady, 90_000);
    await archiveCurrentWal(restored, primary);
    const sourceArchive = join(repo.path, 'archive', 'src');
    const sourceFiles = readdirSync(sourceArchive, { recursive: true }).map(String);
    assert.ok(
      !sourceFiles.some((f) => /(^|\/)0000000[2-9]/.test(f.split('/').at(-1) ?? '')),
      'no WAL or history of the restored timeline in the source stanza',
    );
    assert.ok(existsSync(join(repo.path, 'archive', 'restored')), 'the restored cluster archives into its own stanza');
    const ownWal = readdirSync(join(repo.path, 'archive', 'restored'), { recursive: true }).map(String);
    assert.ok(
      ownWal.some((f) => /0000000[2-9][0-9A-F]{16}-/.test(f)),
      'WAL of the new timeline in the restored stanza',
    );
  });

  it('refuses a target time before the first backup, naming the field and the earliest restorable time', async () => {
    const early = new Date(Date.parse(firstBackupEnd) - 3_600_000).toISOString();
    const message = await refusedRestore(await startRestored('early', 'early', { target: { time: early } }), 60_000, 'no primary: nothing was started');
    assert.match(message, /recovery\.target\.time/);
    assert.match(message, new RegExp(firstBackupEnd.slice(0, 19)));
  });

  it('refuses a target beyond the end of the archive instead of promoting at its end, giving the last restorable time', async () => {
    const late = new Date(Date.now() + 3_600_000).toISOString();
    const message = await refusedRestore(
      await startRestored('late', 'late', { target: { time: late } }),
      90_000,
      'no silent promotion at the end of the archive',
    );
    assert.match(message, /recovery\.target\.time: beyond the end of the archive; the last restorable time is 20\d\d-/);
  });

  it('refuses to restore into a stanza that already holds an archive (two clusters never share one)', async () => {
    const message = await refusedRestore(await startRestored('again', 'restored', { target: { time: target } }), 60_000);
    assert.match(message, /own archive \(stanza restored\) is not empty/);
  });
});
