import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { archiveCurrentWal, authEnv, backupStatus, posixRepositoryDir, takeBackup } from './support.js';

/**
 * A member joining a cluster that has a backup is built from the newest backup and the archive
 * (pgbackrest restore --type=standby), then streams from the primary: rows written before the
 * backup, after it (archived) and after the last archived segment (only in the primary's WAL)
 * all reach it.
 */
describe('ha-node builds a new replica from the repository (pgBackRest, posix repository)', { timeout: 300_000 }, () => {
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let cluster: TestCluster;
  let primary: Member;
  let label: string;

  before(async () => {
    repo = await posixRepositoryDir();
    const backup = { stanza: 'rfb', repositories: [{ kind: 'posix', path: repo.path }], archiveTimeout: 30 };
    cluster = await startCluster({ members: 2, scope: 'rfb', autoStart: false, env: { ...authEnv, KEELSON_BACKUP: JSON.stringify(backup) } });
    cluster.members[0]!.start();
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    await cluster.waitFor('the stanza ready', async () => (await backupStatus(primary)).stanzaReady, 90_000);
    await primary.query('CREATE TABLE items (id int PRIMARY KEY, phase text)');
    await primary.query("INSERT INTO items SELECT g, 'before the backup' FROM generate_series(1, 100) g");
    const done = await takeBackup(cluster, primary, 'full');
    label = done.info!.backups.at(-1)!.label;
    await primary.query("INSERT INTO items SELECT g, 'archived' FROM generate_series(101, 200) g");
    await archiveCurrentWal(cluster, primary);
    await primary.query("INSERT INTO items SELECT g, 'streamed' FROM generate_series(201, 300) g");
  });

  after(async () => {
    await cluster?.stop();
    repo?.remove();
  });

  it('restores the newest backup, replays the archive, then streams every row from the primary', async () => {
    const replica = cluster.members[1]!;
    replica.start();
    await cluster.waitFor(
      'the replica streaming',
      async () => (await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 1,
      150_000,
    );
    assert.match(replica.log(), new RegExp(`created a replica from backup ${label} and the archive`));
    await cluster.waitFor(
      'every row on the replica',
      async () => (await replica.query<{ n: string }>('SELECT count(*)::text AS n FROM items'))[0]?.n === '300',
      60_000,
    );
    const [phases] = await replica.query<{ phases: string }>("SELECT string_agg(DISTINCT phase, ',' ORDER BY phase) AS phases FROM items");
    assert.equal(phases?.phases, 'archived,before the backup,streamed');
    await primary.query("INSERT INTO items VALUES (301, 'after joining')");
    await cluster.waitFor('a new row streamed', async () => (await replica.query('SELECT 1 FROM items WHERE id = 301')).length === 1, 30_000);
  });
});
