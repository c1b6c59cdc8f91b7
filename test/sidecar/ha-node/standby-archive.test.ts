import assert from 'node:assert/strict';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { postgresRunAs } from '../../support/postgres.js';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { metric, patchConfig, standbyApiEnv, standbyLeaderOf } from './standby-support.js';

const pgParameters = { fsync: false, full_page_writes: true, shared_buffers: '32MB', max_connections: 40 };

/**
 * A standby cluster fed by a WAL archive (restore_command) on real PostgreSQL 15: the source
 * archives with cp into a folder; the standby cluster is cloned by streaming, then its source is
 * patched to the archive alone (host removed). Rows the source writes arrive through the archive
 * once their segment is archived, and the standby leader keeps its role without streaming.
 */
describe('ha-node standby cluster following a WAL archive', { timeout: 300_000 }, () => {
  let archive: string;
  let source: TestCluster;
  let standby: TestCluster;
  let sourcePrimary: Member;
  let leader: Member;

  before(async () => {
    archive = mkdtempSync(join(tmpdir(), 'keelson-archive-'));
    const runAs = await postgresRunAs();
    if (runAs) chownSync(archive, runAs.uid, runAs.gid);
    const archiving = { ...pgParameters, archive_mode: 'on', archive_command: `cp %p ${archive}/%f`, archive_timeout: 0 };
    source = await startCluster({
      members: 1,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'arc',
      env: { ...standbyApiEnv, KEELSON_PG_PARAMETERS: JSON.stringify(archiving) },
    });
    sourcePrimary = await source.waitFor('the source primary', () => source.primary(), 120_000);
    await sourcePrimary.query('CREATE TABLE items (id int PRIMARY KEY)');
    const bootstrap = { standby_cluster: { host: sourcePrimary.ip, port: sourcePrimary.pgPort, restore_command: `cp ${archive}/%f %p` } };
    standby = await startCluster({
      members: 1,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'arcs',
      api: source.api,
      env: { ...standbyApiEnv, KEELSON_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap) },
    });
    leader = await standby.waitFor('the standby leader', () => standbyLeaderOf(standby.members), 180_000);
  });

  after(async () => {
    await standby?.stop();
    await source?.stop();
    if (archive) rmSync(archive, { recursive: true, force: true });
  });

  it('replays from the archive alone once host is removed', async () => {
    const patched = await patchConfig(leader, { standby_cluster: { host: null, port: null } });
    assert.equal(patched.status, 200, patched.text);
    await standby.waitFor('no more streaming from the source', async () => (await leader.query('SELECT 1 FROM pg_stat_wal_receiver')).length === 0, 60_000);
    assert.match(String((await leader.query<{ restore_command: string }>('SHOW restore_command'))[0]?.restore_command), /^cp .*%f %p$/);
    await sourcePrimary.query('INSERT INTO items SELECT generate_series(1, 100)');
    await sourcePrimary.query('SELECT pg_switch_wal()');
    await standby.waitFor(
      'rows through the archive',
      async () => (await leader.query<{ n: number }>('SELECT count(*)::int AS n FROM items'))[0]?.n === 100,
      90_000,
    );
    assert.equal(await leader.status('/standby-leader'), 200);
    assert.equal((await leader.get('/ha')).json().replication_state, 'in archive recovery');
    assert.equal(await metric(leader, 'ha_db_in_archive_recovery'), 1);
    assert.equal(await leader.isWritable(), false);
  });
});
