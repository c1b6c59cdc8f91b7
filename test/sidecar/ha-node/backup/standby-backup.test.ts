import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, type PemPair } from '../../../../lib/tls-certificates.js';
import { X509Certificate } from 'node:crypto';
import { freePort } from '../../../support/ports.js';
import { startCluster, type Member, type TestCluster } from '../harness.js';
import { authEnv, backupStatus, posixRepositoryDir, postBackup } from './support.js';

/**
 * A backup taken on a streaming standby: each member issues its own certificate for its address
 * from the cluster CA and runs pgBackRest's TLS server; the standby runs the backup of its own
 * files with `backup-standby`, reaching the primary over mutual TLS (real pgBackRest 2.45, members
 * on distinct loopback addresses, so the certificate names are checked against real addresses).
 * A third member built from that backup proves it restores.
 */
describe('ha-node takes a backup on a streaming standby (pgBackRest TLS server)', { timeout: 300_000 }, () => {
  let repo: Awaited<ReturnType<typeof posixRepositoryDir>>;
  let caDir: string;
  let cluster: TestCluster;
  let primary: Member;
  let standby: Member;
  let ca: PemPair;

  before(async () => {
    repo = await posixRepositoryDir();
    caDir = mkdtempSync(join(tmpdir(), 'keelson-backup-ca-'));
    ca = createCertificateAuthority('sbk-backup-ca');
    writeFileSync(join(caDir, 'ca.crt'), ca.cert);
    writeFileSync(join(caDir, 'ca.key'), ca.key, { mode: 0o600 });
    const port = await freePort('127.0.0.2');
    const backup = {
      stanza: 'sbk',
      repositories: [{ kind: 'posix', path: repo.path }],
      archiveTimeout: 30,
      tlsServer: { caFile: join(caDir, 'ca.crt'), caKeyFile: join(caDir, 'ca.key'), port, checkSeconds: 1 },
    };
    cluster = await startCluster({ members: 3, scope: 'sbk', autoStart: false, env: { ...authEnv, KEELSON_BACKUP: JSON.stringify(backup) } });
    cluster.members[0]!.start();
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    await cluster.waitFor('the stanza ready', async () => (await backupStatus(primary)).stanzaReady, 90_000);
    standby = cluster.members[1]!;
    standby.start();
    await cluster.waitFor(
      'the standby streaming',
      async () => (await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 1,
      150_000,
    );
    await primary.query('CREATE TABLE items (id int PRIMARY KEY)');
    await primary.query('INSERT INTO items SELECT generate_series(1, 500)');
  });

  after(async () => {
    await cluster?.stop();
    repo?.remove();
    if (caDir) rmSync(caDir, { recursive: true, force: true });
  });

  it('runs the backup on the standby, copying its files, with the primary reached over TLS', async () => {
    await cluster.waitFor('the standby ready for a backup', async () => (await postBackup(standby, { type: 'full' })).status === 202 || undefined, 60_000);
    const done = await cluster.waitFor(
      'the standby backup',
      async () => {
        const status = await backupStatus(standby);
        return !status.running && status.lastBackup ? status : undefined;
      },
      120_000,
    );
    assert.equal(done.lastBackup!.ok, true, done.lastBackup!.message);
    assert.equal((done.lastBackup as { fromStandby?: boolean }).fromStandby, true);
    assert.equal(done.info!.backups.length, 1);
    assert.equal(done.info!.backups[0]!.type, 'full');
    // The primary ran no backup itself; pgBackRest on the standby logged the standby copy.
    assert.equal((await backupStatus(primary)).lastBackup, undefined);
    const log = readFileSync(join(dirname(standby.dataDir), 'pgbackrest', 'log', 'sbk-backup.log'), 'utf8');
    assert.match(log, /--backup-standby/);
    assert.match(log, /--pg2-host=127\.0\.0\.2/);
    assert.match(log, /wait for replay on the standby to reach/);
  });

  it('builds a new member from the backup the standby took', async () => {
    const label = (await backupStatus(standby)).info!.backups[0]!.label;
    const third = cluster.members[2]!;
    third.start();
    await cluster.waitFor(
      'the third member streaming',
      async () => (await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 2,
      150_000,
    );
    assert.match(third.log(), new RegExp(`created a replica from backup ${label} and the archive`));
    await cluster.waitFor(
      'every row on the new member',
      async () => (await third.query<{ n: string }>('SELECT count(*)::text AS n FROM items'))[0]?.n === '500',
      60_000,
    );
  });

  it('rotates the CA as the operator does (stage, then switch) without a failed backup', async () => {
    const renewed = (m: Member): number => m.log().split('issued new pgBackRest TLS certificates').length - 1;
    const issuer = (m: Member): string => new X509Certificate(readFileSync(join(dirname(m.dataDir), 'pgbackrest', 'tls', 'server.crt'))).issuer;
    const backupOnStandby = async (what: string): Promise<void> => {
      const before = (await backupStatus(standby)).info!.backups.length;
      await cluster.waitFor(
        `${what}: the standby ready for a backup`,
        async () => (await postBackup(standby, { type: 'incr' })).status === 202 || undefined,
        60_000,
      );
      const done = await cluster.waitFor(
        `${what}: the backup`,
        async () => {
          const status = await backupStatus(standby);
          return !status.running && status.info && status.info.backups.length > before
            ? status
            : !status.running && status.lastBackup?.ok === false
              ? status
              : undefined;
        },
        120_000,
      );
      assert.equal(done.lastBackup!.ok, true, `${what}: ${done.lastBackup!.message}`);
      assert.equal((done.lastBackup as { fromStandby?: boolean }).fromStandby, true, what);
    };
    const members = [primary, standby];
    const next = createCertificateAuthority('sbk-backup-ca-next');
    // Stage: the new CA is trusted, the old one still signs.
    const counts = members.map(renewed);
    writeFileSync(join(caDir, 'ca.crt'), ca.cert + next.cert);
    await cluster.waitFor('both members took the staged bundle', async () => members.every((m, i) => renewed(m) > counts[i]!) || undefined, 30_000);
    assert.ok(members.every((m) => issuer(m) === 'CN=sbk-backup-ca'));
    await backupOnStandby('staged');
    // Switch: the new CA signs. A backup started while the members may disagree still succeeds.
    const switched = members.map(renewed);
    writeFileSync(join(caDir, 'ca.key'), next.key, { mode: 0o600 });
    writeFileSync(join(caDir, 'ca.crt'), next.cert + ca.cert);
    await cluster.waitFor(
      'the primary re-issued from the new CA',
      async () => (renewed(primary) > switched[0]! && issuer(primary) === 'CN=sbk-backup-ca-next') || undefined,
      30_000,
    );
    await backupOnStandby('switched');
    await cluster.waitFor('the standby re-issued from the new CA', async () => issuer(standby) === 'CN=sbk-backup-ca-next' || undefined, 30_000);
    await backupOnStandby('both on the new CA');
  });

  it('takes the backup on the primary itself when no standby streams', async () => {
    await standby.stop();
    await cluster.members[2]!.stop();
    const onPrimary = await postBackup(primary, { type: 'incr' });
    assert.equal(onPrimary.status, 202, onPrimary.text);
    const done = await cluster.waitFor(
      'the primary backup',
      async () => {
        const status = await backupStatus(primary);
        return !status.running && status.lastBackup ? status : undefined;
      },
      120_000,
    );
    assert.equal(done.lastBackup!.ok, true, done.lastBackup!.message);
    assert.equal((done.lastBackup as { fromStandby?: boolean }).fromStandby, undefined);
    assert.deepEqual(
      done.info!.backups.map((b) => b.type),
      ['full', 'incr', 'incr', 'incr', 'incr'],
    );
  });
});
