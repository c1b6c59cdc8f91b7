import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { haNodeClientFor } from '../../support/ha-node-api.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from '../e2e-support.js';
import { startE2eStack, type E2eStack } from '../e2e-stack.js';
import { eventually, kubectl } from '../support.js';
import { currentTimelineSql } from '../../support/postgres.js';

/**
 * A standby DatabaseCluster from a backup repository (spec.replica.source.repository) on the
 * stand-in with real PostgreSQL and pgBackRest: `vault` takes a backup into a filesystem
 * repository; `vault-dr` (two instances) restores its newest backup instead of cloning by
 * streaming, and follows vault with the repository's archive as fallback. Rows written on vault
 * and archived reach every vault-dr member; `replica.enabled: false` promotes vault-dr. A
 * repository holding no stanza of the source is refused, naming spec.replica.source.repository.
 */
const ns = 'default';
const logger = createLogger({ name: 'e2e-standby-repository', level: process.env.LOG_LEVEL ?? 'silent' });
const ha = { ttl: 10, loopWait: 2, retryTimeout: 4 };
const repositories = [{ name: 'local', volume: { size: '1Gi' } }];

describe('standby DatabaseCluster from a backup repository (stand-in, real PostgreSQL and pgBackRest)', { timeout: 400_000 }, () => {
  let e2e: E2eStack;
  let api: OperatorKubeApi;
  let vault: ClusterDriver;
  let dr: ClusterDriver;

  const podIps = async (driver: ClusterDriver): Promise<string[]> =>
    (await driver.pods()).map((p) => p.status?.podIP).filter((ip): ip is string => ip !== undefined);
  const countOn = async (host: string): Promise<number | undefined> =>
    (await dr.sql(host, 'SELECT count(*)::int AS n FROM items').catch(() => []))[0]?.n as number | undefined;
  const archiveOnVault = async (): Promise<void> => {
    const [switched] = await vault.query('vault-rw', 'SELECT pg_walfile_name(pg_switch_wal()) AS wal');
    await eventually(
      'the switched WAL archived',
      async () => {
        const [row] = await vault.query('vault-rw', 'SELECT last_archived_wal AS last FROM pg_stat_archiver');
        return row?.last !== null && String(row!.last) >= String(switched!.wal) ? row : undefined;
      },
      60_000,
    );
  };

  before(async () => {
    e2e = await startE2eStack('e2e-standby-repo', { logger, ipPrefix: '127.0.55' });
    ({ api } = e2e);
    vault = clusterDriver(api, ns, 'vault', viaClusterIp);
    dr = clusterDriver(api, ns, 'vault-dr', viaClusterIp);
  });

  after(async () => {
    await e2e?.close();
  });

  it('restores the newest backup, follows the source on every member, archive included', async () => {
    await vault.create({ instances: 1, ha, backup: { repositories, schedules: { immediate: true } } });
    await vault.healthyWith(1, 120_000);
    await vault.readPassword();
    await vault.query('vault-rw', 'CREATE TABLE items (id int PRIMARY KEY)');
    await vault.query('vault-rw', 'INSERT INTO items SELECT generate_series(1, 100)');
    await eventually(
      'the first backup',
      async () => (((await vault.status()) as { backup?: { backups?: number } }).backup?.backups ?? 0) >= 1 || undefined,
      150_000,
    );
    await vault.query('vault-rw', 'INSERT INTO items SELECT generate_series(101, 200)');
    await archiveOnVault();

    await dr.create({ instances: 2, ha, backup: { repositories }, replica: { source: { cluster: 'vault', repository: 'local' } } });
    await dr.healthyWith(2, 240_000);
    await dr.readPassword();
    const replica = ((await dr.status()) as { replica?: { role?: string; source?: string } }).replica;
    assert.deepEqual([replica?.role, replica?.source], ['standby', 'default/vault and repository local (stanza vault)']);
    const leaderIp = (await api.listPods(ns, 'keelson.io/cluster=vault-dr,keelson.io/role=primary'))[0]!.status!.podIP!;
    const restore = (await (await haNodeClientFor(api, ns, 'vault-dr')).backupStatus(leaderIp)).restore;
    assert.match(restore?.message ?? '', /restored a standby from the repository/, 'the first member came from the backup, not pg_basebackup');
    const [settings] = await dr.sql(leaderIp, 'SHOW restore_command');
    assert.match(String(settings?.restore_command), /source\.conf.*--stanza=vault.*archive-get/, 'the archive is the fallback');

    await vault.query('vault-rw', 'INSERT INTO items SELECT generate_series(201, 300)');
    await archiveOnVault();
    for (const ip of await podIps(dr)) await eventually(`the rows on ${ip}`, async () => ((await countOn(ip)) === 300 ? true : undefined), 90_000);
  });

  it('replica.enabled: false promotes it onto a new timeline with the same rows', async () => {
    await kubectl(
      e2e.stack.kubeconfigPath,
      e2e.dir,
      '-n',
      ns,
      'patch',
      'dbc/vault-dr',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { replica: { enabled: false } } }),
    );
    await eventually(
      'vault-dr promoted',
      async () => (((await dr.status()) as { replica?: { role?: string } }).replica?.role === 'primary' ? true : undefined),
      90_000,
    );
    const [after] = await eventually(
      'vault-dr-rw writable',
      async () => {
        const rows = await dr.query('vault-dr-rw', `SELECT pg_is_in_recovery() AS standby, ${currentTimelineSql('t')}`);
        return rows[0]?.standby === false ? rows : undefined;
      },
      60_000,
    );
    assert.ok(Number(after?.t) > 1, 'a new timeline');
    const [rows] = await dr.query('vault-dr-rw', 'SELECT count(*)::int AS n FROM items');
    assert.equal(rows?.n, 300);
  });

  it('a repository without the source stanza: refused, naming spec.replica.source.repository, with an Event', async () => {
    const lost = clusterDriver(api, ns, 'lost', viaClusterIp);
    await lost.create({
      instances: 1,
      ha,
      backup: { repositories },
      replica: { source: { repository: 'local', stanza: 'nowhere', credentialsSecret: 'vault-replication' } },
    });
    const condition = await eventually(
      'BackupReady=False',
      async () => {
        const c = (await lost.status()).conditions?.find((x) => x.type === 'BackupReady');
        return c?.status === 'False' ? c : undefined;
      },
      120_000,
    );
    assert.equal(condition.reason, 'RestoreFailed');
    assert.match(condition.message, /spec\.replica\.source\.repository \(local\): recovery\.stanza: no stanza nowhere/);
    assert.ok(
      (await lost.events()).some((e) => e.reason === 'RestoreFailed' && /spec\.replica\.source\.repository/.test(e.message ?? '')),
      'an Event names the field',
    );
  });
});
