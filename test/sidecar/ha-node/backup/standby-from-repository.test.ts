import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { patchConfig, standbyApiEnv, standbyLeaderOf } from '../standby-support.js';
import { archiveCurrentWal, authEnv, backupStatus, posixRepositoryDir, takeBackup } from './support.js';
import { currentTimelineSql } from '../../../support/postgres.js';

/**
 * A standby cluster bootstrapped from a backup repository and following the source's WAL archive
 * (real PostgreSQL 15 and pgBackRest, filesystem repository): its first member restores the
 * source's newest backup instead of cloning by streaming, replays the archive as standby leader,
 * the second member cascades from it; rows the source archives reach both; removing
 * standby_cluster promotes it onto a new timeline with the same rows.
 */
describe('ha-node standby cluster from a backup repository', { timeout: 300_000 }, () => {
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let source: TestCluster;
  let standby: TestCluster | undefined;
  let refused: TestCluster | undefined;
  let other: TestCluster | undefined;
  let mixed: TestCluster | undefined;
  let streaming: TestCluster | undefined;
  let sourcePrimary: Member;
  const repository = (): Record<string, unknown> => ({ kind: 'posix', path: repo.path });
  const standbyBackup = (stanza: string, sourceStanza: string): string =>
    JSON.stringify({ stanza, repositories: [repository()], archiveTimeout: 30, recovery: { stanza: sourceStanza, repository: repository(), standby: true } });
  const standbyEnv = (stanza: string, sourceStanza: string, host?: Member): Record<string, string> => ({
    ...standbyApiEnv,
    KEELSON_BACKUP: standbyBackup(stanza, sourceStanza),
    KEELSON_BOOTSTRAP_CONFIG: JSON.stringify({ standby_cluster: { repository: true, ...(host ? { host: host.ip, port: host.pgPort } : {}) } }),
  });
  const systemOf = async (member: Member): Promise<string> =>
    String((await member.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id);
  /** The source's pgBackRest configuration, which holds its repository credentials. */
  const hasSourceConf = (member: Member): boolean => existsSync(join(dirname(member.dataDir), 'pgbackrest', 'source.conf'));
  const count = async (member: Member): Promise<number | undefined> =>
    (await member.query<{ n: number }>('SELECT count(*)::int AS n FROM items').catch(() => []))[0]?.n;

  before(async () => {
    repo = await posixRepositoryDir();
    source = await startCluster({
      members: 1,
      scope: 'rsrc',
      env: { ...authEnv, KEELSON_BACKUP: JSON.stringify({ stanza: 'rsrc', repositories: [repository()], archiveTimeout: 30 }) },
    });
    sourcePrimary = await source.waitFor('the source primary', () => source.primary(), 120_000);
    await source.waitFor('the stanza ready', async () => (await backupStatus(sourcePrimary)).stanzaReady, 90_000);
    await sourcePrimary.query('CREATE TABLE items (id int PRIMARY KEY)');
    await sourcePrimary.query('INSERT INTO items SELECT generate_series(1, 100)');
    await takeBackup(source, sourcePrimary, 'full');
    // Written after the backup: only the archive carries these to the standby.
    await sourcePrimary.query('INSERT INTO items SELECT generate_series(101, 200)');
    await archiveCurrentWal(source, sourcePrimary);
  });

  after(async () => {
    await streaming?.stop();
    await mixed?.stop();
    await other?.stop();
    await refused?.stop();
    await standby?.stop();
    await source?.stop();
    repo?.remove();
  });

  it('restores the newest backup, follows the archive on every member and promotes', async () => {
    standby = await startCluster({ members: 2, ttl: 8, loopWait: 1, retryTimeout: 3, scope: 'rstb', api: source.api, env: standbyEnv('rstb', 'rsrc') });
    const leader = await standby.waitFor('the standby leader', () => standbyLeaderOf(standby!.members), 180_000);
    assert.match((await backupStatus(leader)).restore?.message ?? '', /standby from the repository/);
    const restoreCommand = String((await leader.query<{ restore_command: string }>('SHOW restore_command'))[0]?.restore_command);
    assert.match(restoreCommand, /source\.conf.*--stanza=rsrc.*archive-get/);
    assert.equal((await leader.query('SELECT 1 FROM pg_stat_wal_receiver')).length, 0, 'no streaming: the source has no host');
    for (const member of standby.members) await standby.waitFor(`${member.name} has the archived rows`, async () => (await count(member)) === 200, 90_000);

    await sourcePrimary.query('INSERT INTO items SELECT generate_series(201, 300)');
    await archiveCurrentWal(source, sourcePrimary);
    for (const member of standby.members)
      await standby.waitFor(`${member.name} has the rows archived later`, async () => (await count(member)) === 300, 90_000);
    assert.equal(await leader.status('/standby-leader'), 200);
    assert.equal(await leader.status('/primary'), 503);
    assert.equal(await leader.isWritable(), false);
    for (const member of standby.members) assert.ok(hasSourceConf(member), `${member.name} can read the source's archive`);

    const promoted = await patchConfig(leader, { standby_cluster: null });
    assert.equal(promoted.status, 200, promoted.text);
    await standby.waitFor('the promoted leader writable', () => leader.isWritable(), 60_000);
    const [timeline] = await leader.query<{ tli: number }>(`SELECT ${currentTimelineSql('tli')}`);
    assert.ok(timeline!.tli > 1, 'promoted onto a new timeline');
    assert.equal(await count(leader), 300);
    await leader.query('INSERT INTO items VALUES (301)');
    const replica = standby.members.find((m) => m !== leader)!;
    await standby.waitFor('the other member follows the promoted leader', async () => (await count(replica)) === 301, 60_000);

    // Promoted: the source's credentials leave every member's volume, and a restart writes none.
    for (const member of standby.members) await standby.waitFor(`${member.name} without source.conf`, async () => !hasSourceConf(member), 30_000);
    await replica.stop();
    replica.start();
    await leader.query('INSERT INTO items VALUES (302)');
    await standby.waitFor('the restarted member follows again', async () => (await count(replica)) === 302, 90_000);
    assert.equal(hasSourceConf(replica), false, 'a restart of a promoted member does not write source.conf');
  });

  it('refuses a source stanza the repository does not hold, naming it', async () => {
    refused = await startCluster({ members: 1, ttl: 8, loopWait: 1, retryTimeout: 3, scope: 'rnone', api: source.api, env: standbyEnv('rnone', 'nosuch') });
    const status = await refused.waitFor(
      'the restore refused',
      async () => {
        const s = await backupStatus(refused!.members[0]!);
        return s.restore && !s.restore.ok ? s : undefined;
      },
      60_000,
    );
    assert.match(status.restore!.message, /recovery\.stanza: no stanza nosuch/);
    assert.equal(await refused.members[0]!.status('/standby-leader'), 503);
  });

  it("refuses a streaming source of another database system than the repository's backup, naming both", async () => {
    other = await startCluster({ members: 1, scope: 'rother', api: source.api, env: standbyApiEnv });
    const otherPrimary = await other.waitFor('the other primary', () => other!.primary(), 120_000);
    const [otherSystem, sourceSystem] = [await systemOf(otherPrimary), await systemOf(sourcePrimary)];
    assert.notEqual(otherSystem, sourceSystem);
    mixed = await startCluster({
      members: 1,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'rmix',
      api: source.api,
      env: standbyEnv('rmix', 'rsrc', otherPrimary),
    });
    const member = mixed.members[0]!;
    const status = await mixed.waitFor(
      'the restore refused',
      async () => {
        const s = await backupStatus(member);
        return s.restore && !s.restore.ok ? s : undefined;
      },
      90_000,
    );
    assert.match(
      status.restore!.message,
      new RegExp(
        `streaming source ${otherPrimary.ip}:${otherPrimary.pgPort} is database system ${otherSystem}, but backup \\S+ in the source stanza rsrc is of system ${sourceSystem}`,
      ),
    );
    assert.match(status.restore!.message, /different clusters; nothing was restored/);
    assert.equal(existsSync(join(member.dataDir, 'PG_VERSION')), false, 'nothing restored');
    assert.equal(await member.status('/standby-leader'), 503);
  });

  it("restores and streams when the streaming source is the repository's database system", async () => {
    streaming = await startCluster({
      members: 1,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'rstr',
      api: source.api,
      env: standbyEnv('rstr', 'rsrc', sourcePrimary),
    });
    const leader = await streaming.waitFor('the standby leader', () => standbyLeaderOf(streaming!.members), 180_000);
    assert.equal(await systemOf(leader), await systemOf(sourcePrimary));
    await streaming.waitFor(
      'streaming from the source',
      async () => (await leader.query("SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'")).length === 1,
      90_000,
    );
  });
});
