import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startS3, type TestS3 } from '../../../support/s3.js';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { authEnv, backupStatus, postBackup } from './support.js';

/**
 * A repository that refuses our credentials: the cluster keeps serving, GET /backup says why, WAL
 * waits in pg_wal until it can be archived, and all recovers once the mounted key is right.
 * (s3rver checks the access key id, not SigV4 signatures, so the wrong credential is the key id.)
 */
describe('ha-node with an unusable repository', { timeout: 180_000 }, () => {
  let s3: TestS3;
  let cluster: TestCluster;
  let primary: Member;
  let keyFile: string;

  before(async () => {
    s3 = await startS3();
    keyFile = join(s3.dir, 'wrong-access-key');
    writeFileSync(keyFile, 'NOT-A-KEY-ID\n', { mode: 0o644 });
    const repository = { ...s3.repository(s3.uniquePath('refused')), keyFile };
    cluster = await startCluster({
      members: 1,
      scope: 'refused',
      env: { ...authEnv, KEELSON_BACKUP: JSON.stringify({ stanza: 'refused', repositories: [repository], archiveTimeout: 30 }) },
    });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
  });

  after(async () => {
    await cluster?.stop();
    await s3?.close();
  });

  it('reports the refusal, keeps the primary writable and its WAL until archived, and never logs the secret', async () => {
    const status = await cluster.waitFor(
      'the archive check failed',
      async () => {
        const s = await backupStatus(primary);
        return s.archive && !s.archive.ok ? s : undefined;
      },
      60_000,
    );
    assert.equal(status.stanzaReady, false);
    assert.match(status.archive!.message, /403|Forbidden|InvalidAccessKeyId/);
    const metrics = (await primary.get('/metrics')).body;
    assert.match(metrics, /^ha_backup_archive_check_failing\{scope="refused",name="refused-0"\} 1$/m);
    assert.match(metrics, /^ha_backup_stanza_ready\{scope="refused",name="refused-0"\} 0$/m);
    assert.equal(await primary.isWritable(), true, 'the cluster keeps serving');
    await primary.query('CREATE TABLE t AS SELECT generate_series(1, 10) AS id');
    const [{ wal }] = (await primary.query<{ wal: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS wal')) as [{ wal: string }];
    await cluster.waitFor(
      'a failed archive attempt',
      async () => Number((await primary.query<{ f: string }>('SELECT failed_count::text AS f FROM pg_stat_archiver'))[0]?.f) > 0,
      60_000,
    );
    const [kept] = await primary.query<{ n: string }>('SELECT count(*)::text AS n FROM pg_ls_archive_statusdir() WHERE name = $1', [`${wal}.ready`]);
    assert.equal(kept?.n, '1', 'the segment waits in pg_wal, marked ready');
    // The archive lag shows in the metrics: the waiting segment, and its age growing past archive_timeout.
    const lag = await cluster.waitFor(
      'the lag past archive_timeout',
      async () => {
        const text = (await primary.get('/metrics')).body;
        const read = (name: string) => Number(new RegExp(`^${name}\\{scope="refused",name="refused-0"\\} (\\S+)$`, 'm').exec(text)?.[1]);
        return read('ha_backup_archive_pending_age_seconds') > read('ha_backup_archive_timeout_seconds')
          ? { segments: read('ha_backup_archive_pending_segments') }
          : undefined;
      },
      90_000,
    );
    assert.ok(lag.segments >= 1);
    const refused = await postBackup(primary, { type: 'full' });
    assert.equal(refused.status, 503, 'no backup before the stanza is ready');
    assert.doesNotMatch(primary.log(), /s3-key(-secret)?=(?!<redacted>)/, 'credentials never reach the log');
  });

  it('recovers once the mounted key is fixed: stanza ready, the waiting WAL archived', async () => {
    writeFileSync(keyFile, 'S3RVER\n', { mode: 0o644 });
    const fixed = await cluster.waitFor(
      'the stanza ready after the fix',
      async () => {
        const s = await backupStatus(primary);
        return s.stanzaReady ? s : undefined;
      },
      90_000,
    );
    assert.equal(fixed.archive?.ok, true);
    await cluster.waitFor(
      'the waiting WAL archived',
      async () =>
        Number((await primary.query<{ n: string }>("SELECT count(*)::text AS n FROM pg_ls_archive_statusdir() WHERE name LIKE '%.ready'"))[0]?.n) === 0,
      60_000,
    );
  });
});
