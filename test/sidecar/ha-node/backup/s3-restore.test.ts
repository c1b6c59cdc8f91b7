import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startS3, type TestS3 } from '../../../support/s3.js';
import { startCluster, type TestCluster } from '../harness.js';
import { archiveCurrentWal, authEnv, backupStatus, takeBackup } from './support.js';

/**
 * Losing every pod and every volume of a cluster: all that is left is the S3 repository (s3rver
 * over TLS). A new cluster restored from it to the end of the archive has every committed row,
 * including those written after the last backup (they come from the archived WAL).
 */
describe('ha-node restore from S3 after losing the whole cluster', { timeout: 240_000 }, () => {
  let s3: TestS3;
  let lost: TestCluster | undefined;
  let back: TestCluster | undefined;
  let path: string;

  before(async () => {
    s3 = await startS3();
    path = s3.uniquePath('lost');
  });

  after(async () => {
    await back?.stop();
    await lost?.stop();
    await s3?.close();
  });

  it('brings back every committed row into a new cluster', async () => {
    lost = await startCluster({
      members: 2,
      scope: 'lost',
      env: { ...authEnv, KEELSON_BACKUP: JSON.stringify({ stanza: 'lost', repositories: [s3.repository(path)], archiveTimeout: 30 }) },
    });
    const primary = await lost.waitFor('a primary', () => lost!.primary(), 120_000);
    await lost.waitFor('the stanza ready', async () => (await backupStatus(primary)).stanzaReady, 90_000);
    await primary.query('CREATE TABLE orders (id int PRIMARY KEY, note text)');
    await primary.query("INSERT INTO orders SELECT g, 'before the backup' FROM generate_series(1, 500) g");
    await takeBackup(lost, primary, 'full');
    await primary.query("INSERT INTO orders SELECT g, 'after the backup' FROM generate_series(501, 750) g");
    await archiveCurrentWal(lost, primary);
    const baseDir = lost.baseDir;
    // Every pod and every volume gone (the API server stays: it is the Kubernetes control plane).
    for (const member of lost.members) member.killPod();
    const keepEnv = process.env.HA_TEST_KEEP;
    delete process.env.HA_TEST_KEEP;
    await lost.stop().catch(() => undefined);
    if (keepEnv !== undefined) process.env.HA_TEST_KEEP = keepEnv;
    lost = undefined;
    assert.equal(existsSync(baseDir), false, 'the data volumes are gone');

    const recovery = { stanza: 'lost', repository: s3.repository(path) };
    back = await startCluster({
      members: 2,
      scope: 'back',
      env: { ...authEnv, KEELSON_BACKUP: JSON.stringify({ stanza: 'back', repositories: [s3.repository(path)], archiveTimeout: 30, recovery }) },
    });
    const restored = await back.waitFor('the restored primary', () => back!.primary(), 150_000);
    const rows = await restored.query<{ note: string; n: string }>('SELECT note, count(*)::text AS n FROM orders GROUP BY note ORDER BY note');
    assert.deepEqual(rows, [
      { note: 'after the backup', n: '250' },
      { note: 'before the backup', n: '500' },
    ]);
    await back.waitFor('the restored stanza ready in S3', async () => (await backupStatus(restored)).stanzaReady, 90_000);
  });
});
