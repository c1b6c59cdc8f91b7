import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { posixBackupSettings, refusedRestore, sourceWithFirstBatch } from './pitr-support.js';
import { archiveCurrentWal, authEnv, posixRepositoryDir, type BackupListing } from './support.js';
import { currentTimelineSql } from '../../../support/postgres.js';

/**
 * Recovery targets besides a time, each restoring a NEW cluster from a filesystem repository:
 * rows in three batches around a full backup (batch 1 before it); after batch 2 a restore point,
 * its transaction id and the WAL position are noted. An LSN, a restore point or an xid each bring
 * back exactly batches 1 and 2; `immediate` stops once the backup is consistent (batch 1 only).
 * An LSN before the first backup is refused naming the earliest; one beyond the archive fails
 * with the last restorable time, without promoting.
 */
describe('ha-node recovery targets lsn, name, xid, immediate (pgBackRest, posix repository)', { timeout: 480_000 }, () => {
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let source: TestCluster;
  let primary: Member;
  let lsn: string;
  let xid: string;
  let backupLsnStop: string;
  let settings: ReturnType<typeof posixBackupSettings>;
  const config = (stanza: string, target?: Record<string, unknown>): string => settings(stanza, target && { target });

  before(async () => {
    repo = await posixRepositoryDir();
    settings = posixBackupSettings(repo.path, 'tsrc');
    source = await startCluster({ members: 1, scope: 'tsrc', env: { ...authEnv, KEELSON_BACKUP: config('tsrc') } });
    let full: BackupListing;
    ({ primary, full } = await sourceWithFirstBatch(source));
    backupLsnStop = full.info!.backups[0]!.lsnStop!;
    // Batch 2 in one transaction whose id is the xid target.
    const [row] = await primary.query<{ xid: string }>(
      'WITH batch AS (INSERT INTO items SELECT g, 2 FROM generate_series(101, 200) g) SELECT pg_current_xact_id()::text AS xid',
    );
    xid = row!.xid;
    await primary.query("SELECT pg_create_restore_point('after-batch-2')");
    [{ lsn }] = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')) as [{ lsn: string }];
    await primary.query('INSERT INTO items SELECT g, 3 FROM generate_series(201, 300) g');
    await primary.query('DROP TABLE items');
    await archiveCurrentWal(source, primary);
  });

  after(async () => {
    await source?.stop();
    repo?.remove();
  });

  async function restoreTo(scope: string, target: Record<string, unknown>): Promise<{ batches: string; tli: number }> {
    const cluster = await startCluster({ members: 1, scope, api: source.api, env: { ...authEnv, KEELSON_BACKUP: config(scope, target) } });
    try {
      const restored = await cluster.waitFor(`the ${scope} primary`, () => cluster.primary(), 150_000);
      const rows = await restored.query<{ batches: string }>(
        "SELECT string_agg(batch || ':' || n, ',' ORDER BY batch) AS batches FROM (SELECT batch, count(*) AS n FROM items GROUP BY batch) b",
      );
      const [timeline] = await restored.query<{ tli: number }>(`SELECT ${currentTimelineSql('tli')}`);
      return { batches: rows[0]!.batches, tli: timeline!.tli };
    } finally {
      await cluster.stop();
    }
  }

  async function refusal(scope: string, target: Record<string, unknown>, timeoutMs: number): Promise<string> {
    return refusedRestore(await startCluster({ members: 1, scope, api: source.api, env: { ...authEnv, KEELSON_BACKUP: config(scope, target) } }), timeoutMs);
  }

  it('an LSN: exactly batches 1 and 2, on a new timeline', async () => {
    const restored = await restoreTo('tlsn', { lsn });
    assert.equal(restored.batches, '1:100,2:100');
    assert.ok(restored.tli > 1);
  });

  it('a restore point name: exactly batches 1 and 2', async () => {
    assert.equal((await restoreTo('tname', { name: 'after-batch-2' })).batches, '1:100,2:100');
  });

  it('a transaction id: stops after its commit (batches 1 and 2); exclusive stops before it (batch 1)', async () => {
    assert.equal((await restoreTo('txid', { xid })).batches, '1:100,2:100');
    assert.equal((await restoreTo('txidx', { xid, exclusive: true })).batches, '1:100');
  });

  it('immediate: stops once the backup is consistent (batch 1 only)', async () => {
    assert.equal((await restoreTo('timm', { immediate: true })).batches, '1:100');
  });

  it('refuses an LSN before the end of the first backup, naming the field and the earliest LSN', async () => {
    const message = await refusal('tearly', { lsn: '0/10' }, 60_000);
    assert.match(
      message,
      new RegExp(
        `^recovery\\.target\\.lsn: 0/10 is before the end of the first backup \\(${backupLsnStop}\\); the earliest restorable LSN is ${backupLsnStop}`,
      ),
    );
  });

  it('fails an LSN beyond the end of the archive with the last restorable time, without promoting', async () => {
    const message = await refusal('tlate', { lsn: 'FF/0' }, 120_000);
    assert.match(message, /^recovery\.target\.lsn: beyond the end of the archive; the last restorable time is 20\d\d-/);
  });
});
