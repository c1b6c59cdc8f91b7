import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startS3, type TestS3 } from '../../../support/s3.js';
import { runCtl } from '../../../ctl/ctl-runner.js';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { apiPassword, apiUser, archiveCurrentWal, authEnv, backupStatus, posixRepositoryDir, postBackup, takeBackup } from './support.js';

/**
 * WAL archiving and base backups with real pgBackRest into two repositories at once: a filesystem
 * folder and s3rver over TLS (certificate verified against its CA file).
 */
describe('ha-node WAL archiving and backups (pgBackRest, posix + S3)', { timeout: 240_000 }, () => {
  let s3: TestS3;
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let cluster: TestCluster;
  let primary: Member;
  let replica: Member;

  before(async () => {
    s3 = await startS3();
    repo = await posixRepositoryDir();
    const backup = {
      stanza: 'arch',
      repositories: [{ kind: 'posix', path: repo.path }, s3.repository(s3.uniquePath('arch'))],
      retention: { fullCount: 2 },
      archiveTimeout: 30,
    };
    cluster = await startCluster({ members: 2, scope: 'arch', env: { ...authEnv, KEELSON_BACKUP: JSON.stringify(backup) } });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    replica = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor(
      'the replica streaming',
      async () => (await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 1,
      90_000,
    );
  });

  after(async () => {
    await cluster?.stop();
    await s3?.close();
    repo?.remove();
  });

  it('creates the stanza on the primary and its WAL reaches both repositories (pgbackrest check)', async () => {
    const status = await cluster.waitFor(
      'the stanza ready',
      async () => {
        const s = await backupStatus(primary);
        return s.stanzaReady ? s : undefined;
      },
      90_000,
    );
    assert.equal(status.archive?.ok, true);
    await archiveCurrentWal(cluster, primary);
    // GET /backup reuses a listing for a few seconds (one pgbackrest info for many callers): ask until it is renewed.
    const repositoriesListed = async () => [...new Set((await backupStatus(primary)).info?.wal.filter((w) => w.max).map((w) => w.repository))].sort();
    const repositories = await cluster
      .waitFor(
        'archived WAL in both repositories',
        async () => {
          const listed = await repositoriesListed();
          return listed.length === 2 ? listed : undefined;
        },
        20_000,
      )
      .catch(async () => repositoriesListed());
    assert.deepEqual(repositories, [1, 2], 'archived WAL listed in the posix and the S3 repository');
  });

  it('only the primary archives: the replica runs archive_mode=on without archiving', async () => {
    // The replica may be restarting to take the archive settings (archive_mode needs a restart).
    await cluster.waitFor(
      'the replica answering with the archive settings',
      async () => {
        const rows = await replica.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'restore_command'").catch(() => []);
        return /archive-get %f %p/.test(rows[0]?.setting ?? '');
      },
      60_000,
    );
    const [setting] = await replica.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'archive_mode'");
    assert.equal(setting?.setting, 'on');
    const [stats] = await replica.query<{ archived: string; failed: string }>(
      'SELECT archived_count::text AS archived, failed_count::text AS failed FROM pg_stat_archiver',
    );
    assert.equal(stats?.archived, '0');
    assert.equal(stats?.failed, '0');
    const [restore] = await replica.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'restore_command'");
    assert.match(restore?.setting ?? '', /archive-get %f %p/, 'a replica can catch up from the archive');
  });

  it('refuses unauthenticated and malformed backup requests, naming the field', async () => {
    assert.equal((await postBackup(primary, { type: 'full' }, false)).status, 401);
    const badType = await postBackup(primary, { type: 'weekly' });
    assert.equal(badType.status, 400);
    assert.match(badType.text, /"type"/);
    const badRepo = await postBackup(primary, { type: 'full', repository: 9 });
    assert.equal(badRepo.status, 400);
    assert.match(badRepo.text, /"repository"/);
    assert.equal((await postBackup(primary, '{"type":')).status, 400);
    assert.equal((await postBackup(replica, { type: 'full' })).status, 503, 'a replica does not take backups');
  });

  it('takes a full and an incremental backup; pgbackrest info lists both, the incremental on top of the full', async () => {
    await primary.query('CREATE TABLE IF NOT EXISTS t (id int)');
    const full = await takeBackup(cluster, primary, 'full');
    const fullSet = full.info!.backups.find((b) => b.type === 'full')!;
    assert.ok(fullSet, 'a full backup is listed');
    assert.equal(fullSet.timeline, 1);
    assert.match(fullSet.systemIdentifier ?? '', /^\d+$/);
    // A second request while one runs is refused rather than queued.
    const busy = await postBackup(primary, { type: 'incr' });
    const second = busy.status === 202 ? await postBackup(primary, { type: 'incr' }) : busy;
    assert.equal(second.status, 409);
    await cluster.waitFor('no backup running', async () => !(await backupStatus(primary)).running, 90_000);
    await primary.query('INSERT INTO t SELECT generate_series(1, 1000)');
    const incr = await takeBackup(cluster, primary, 'incr');
    const sets = incr.info!.backups;
    const last = sets.at(-1)!;
    assert.equal(last.type, 'incr');
    assert.ok(
      sets.some((b) => b.label === last.prior),
      'the incremental names a listed backup as its prior',
    );
  });

  it('retention keeps the configured count of full backups (2) and drops the oldest with what depends on it', async () => {
    const before = (await backupStatus(primary)).info!.backups.filter((b) => b.repository === 1);
    const oldestFull = before.find((b) => b.type === 'full')!;
    await takeBackup(cluster, primary, 'full');
    await takeBackup(cluster, primary, 'full');
    const after = (await backupStatus(primary)).info!.backups.filter((b) => b.repository === 1);
    assert.equal(after.filter((b) => b.type === 'full').length, 2);
    assert.ok(!after.some((b) => b.label === oldestFull.label || b.prior === oldestFull.label), 'the oldest full and its incremental are expired');
  });

  it('publishes ha_backup_* metrics: stanza ready, last success, nothing failing', async () => {
    const text = (await primary.get('/metrics')).body;
    const value = (name: string): number => Number(new RegExp(`^${name}\\{scope="arch",name="${primary.name}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.equal(value('ha_backup_stanza_ready'), 1);
    assert.equal(value('ha_backup_archive_check_failing'), 0);
    assert.equal(value('ha_backup_last_failed'), 0);
    assert.ok(Math.abs(value('ha_backup_last_success_timestamp_seconds') - Date.now() / 1000) < 600, 'a recent successful backup');
    assert.equal(value('ha_backup_archive_timeout_seconds'), 30);
    // Per repository, from the last listing: the newest backup, its size and duration, the restorable window.
    const listed = (await backupStatus(primary)).info!.backups.filter((b) => b.repository === 1);
    const refreshed = (await primary.get('/metrics')).body;
    const inRepository = (name: string): number =>
      Number(new RegExp(`^${name}\\{scope="arch",name="${primary.name}",repository="1"\\} (\\S+)$`, 'm').exec(refreshed)?.[1]);
    assert.equal(inRepository('ha_backup_newest_timestamp_seconds'), Date.parse(listed.at(-1)!.stoppedAt) / 1000);
    assert.equal(inRepository('ha_backup_restorable_since_timestamp_seconds'), Date.parse(listed.map((b) => b.stoppedAt).sort()[0]!) / 1000);
    assert.ok(inRepository('ha_backup_newest_size_bytes') > 1_000_000, 'the database size');
    assert.ok(inRepository('ha_backup_newest_duration_seconds') >= 0);
    assert.equal(inRepository('ha_backup_count'), listed.length);
    assert.ok(Number.isFinite(Number(/^ha_backup_archive_pending_segments\{[^}]*\} (\d+)$/m.exec(refreshed)?.[1])), 'pending WAL is counted');
  });

  it('keelson ctl backups lists them with the restorable window; ctl backup starts one, authenticated', async () => {
    const listed = await runCtl(['--url', primary.apiUrl, 'backups']);
    assert.equal(listed.code, 0, listed.stderr);
    const labels = (await backupStatus(primary)).info!.backups.map((b) => b.label);
    for (const label of labels) assert.ok(listed.stdout.includes(label), `${label} listed`);
    assert.match(listed.stdout, /Restorable from 20\d\d-/);
    const refused = await runCtl(['--url', replica.apiUrl, '--url', primary.apiUrl, 'backup', '--type', 'incr']);
    assert.notEqual(refused.code, 0, 'no credentials: refused');
    const started = await runCtl(['--url', primary.apiUrl, '--username', apiUser, '--password', apiPassword, 'backup', '--type', 'incr']);
    assert.equal(started.code, 0, started.stderr);
    assert.match(started.stdout, /incr backup started/);
    await cluster.waitFor('the backup finished', async () => !(await backupStatus(primary)).running, 90_000);
  });

  it('takes a full backup into the S3 repository on request', async () => {
    const listed = await takeBackup(cluster, primary, 'full', 2);
    assert.ok(listed.info!.backups.some((b) => b.repository === 2 && b.type === 'full'));
  });
});
