import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCtl } from '../../../ctl/ctl-runner.js';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { archiveCurrentWal, authEnv, backupStatus, posixRepositoryDir, takeBackup } from './support.js';

/**
 * GET /backup/window and `keelson ctl restore-window`: per repository, the end of the oldest good
 * backup (earliest) and the last commit and record in the newest archived WAL (latest), read from
 * the repository with real pgBackRest and pg_waldump. Two repositories: WAL reaches both, the
 * backup only the first, so the second says it has nothing to restore from yet.
 */
interface Window {
  repository: number;
  earliest?: { time?: string; lsn?: string; backup: string };
  latest?: { time?: string; lsn?: string; segment: string };
  note?: string;
}

const lsnValue = (lsn: string): bigint => {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
};

describe('the restorable window of each repository (pgBackRest, pg_waldump)', { timeout: 240_000 }, () => {
  const repos: Awaited<ReturnType<typeof posixRepositoryDir>>[] = [];
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    repos.push(await posixRepositoryDir(), await posixRepositoryDir());
    const backup = { stanza: 'win', repositories: repos.map((r) => ({ kind: 'posix', path: r.path })), archiveTimeout: 30 };
    cluster = await startCluster({ members: 1, scope: 'win', env: { ...authEnv, KEELSON_BACKUP: JSON.stringify(backup) } });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    await cluster.waitFor('the stanza ready', async () => (await backupStatus(primary)).stanzaReady, 90_000);
  });

  after(async () => {
    await cluster?.stop();
    for (const repo of repos) repo.remove();
  });

  const window = async (): Promise<Window[]> => {
    const response = await primary.get('/backup/window');
    assert.equal(response.status, 200, response.body);
    return (response.json() as unknown as { repositories: Window[] }).repositories;
  };

  it('runs from the end of the oldest backup to the last archived commit', async () => {
    const before = await window();
    assert.equal(before.length, 2);
    assert.match(before[0]!.note!, /no backup yet/);
    const done = await takeBackup(cluster, primary, 'full');
    const set = done.info!.backups.at(-1)!;
    await primary.query('CREATE TABLE marks (id int)');
    const [{ at }] = await primary.query<{ at: Date }>('SELECT clock_timestamp() AS at');
    await primary.query('INSERT INTO marks VALUES (1)');
    const [{ lsn }] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    await archiveCurrentWal(cluster, primary);
    const [first, second] = await window();
    assert.deepEqual(first!.earliest, { backup: set.label, time: set.stoppedAt, lsn: set.lsnStop });
    assert.ok(first!.latest?.time, JSON.stringify(first));
    assert.ok(Date.parse(first!.latest.time) >= at!.getTime(), `the last commit ${first!.latest.time} is at or after the insert began (${at!.toISOString()})`);
    assert.ok(Date.parse(first!.latest.time) <= Date.now());
    assert.ok(lsnValue(first!.latest.lsn!) >= lsnValue(lsn!) - 200n, `latest LSN ${first!.latest.lsn} reaches the insert's commit (${lsn})`);
    assert.ok(lsnValue(first!.latest.lsn!) > lsnValue(set.lsnStop!), 'latest is after earliest');
    assert.equal(second!.earliest, undefined);
    assert.match(second!.note!, /no backup yet/);
    assert.equal(second!.latest?.time, first!.latest.time, 'WAL reaches every repository');

    const shown = await runCtl(['--url', primary.apiUrl, 'restore-window', 'win']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /Repo \| Earliest time +\| Earliest LSN \| Backup +\| Latest time +\| Latest LSN \| Note/);
    assert.match(shown.stdout, new RegExp(`\\| 2 +\\| +\\| +\\| +\\| ${first!.latest.time} \\| ${first!.latest.lsn} +\\| no backup yet`));
    assert.ok(shown.stdout.includes(set.label) && shown.stdout.includes(first!.latest.time), shown.stdout);
    const json = await runCtl(['--url', primary.apiUrl, '-o', 'json', 'restore-window']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { repositories: Window[] }).repositories[0]!.earliest!.backup, set.label);
  });
});
