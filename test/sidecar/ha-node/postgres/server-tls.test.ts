import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../lib/log.js';
import { createCertificateAuthority, issueCertificate, type PemPair } from '../../../../lib/tls-certificates.js';
import { connInfo, renderValue } from '../../../../sidecar/ha-node/postgres/conf.js';
import { peerConnectionTls } from '../../../../sidecar/ha-node/postgres/peer-tls.js';
import { ServerTls } from '../../../../sidecar/ha-node/postgres/server-tls.js';
import { pgBin, startPostgres, type TestPostgres } from '../../../support/postgres.js';

const run = promisify(execFile);
const logger = createLogger({ name: 'server-tls', level: 'silent' });
const serverName = 'shop-0.shop-headless.default.svc';

/** Real PostgreSQL 15 serving the copies ServerTls makes of mounted Secret files; a new certificate is served after a reload, never a restart. */
describe('PostgreSQL TLS from mounted Secret files', { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  let tls: ServerTls;
  let mounted: { server: string; replication: string };
  const ca = createCertificateAuthority('shop.default.keelson.io');
  const issueServer = (): PemPair => issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: ['shop-rw', `*.shop-headless.default.svc`] });
  const mount = (server: PemPair, replication: PemPair) => {
    writeFileSync(join(mounted.server, 'tls.crt'), server.cert);
    writeFileSync(join(mounted.server, 'tls.key'), server.key);
    writeFileSync(join(mounted.server, 'ca.crt'), ca.cert);
    writeFileSync(join(mounted.server, 'client-ca.crt'), ca.cert);
    writeFileSync(join(mounted.replication, 'tls.crt'), replication.cert);
    writeFileSync(join(mounted.replication, 'tls.key'), replication.key);
    writeFileSync(join(mounted.replication, 'ca.crt'), ca.cert);
  };
  const psql = async (conninfo: string, sql: string) =>
    (await run(join(pgBin, 'psql'), ['-X', '-At', '-d', conninfo, '-c', sql], { env: { ...process.env, PGPASSWORD: pg.password } })).stdout.trim();
  const verifyFull = (root: string) =>
    `host=${serverName} hostaddr=${pg.host} port=${pg.port} user=${pg.superuser} dbname=postgres sslmode=verify-full sslrootcert=${root} connect_timeout=5`;
  /** The certificate a new connection is served (openssl s_client, stdin closed at once). */
  const servedCertificate = async (): Promise<string> => {
    const { stdout } = spawnSync('openssl', ['s_client', '-starttls', 'postgres', '-connect', `${pg.host}:${pg.port}`, '-servername', serverName], {
      input: '',
      timeout: 10_000,
      encoding: 'utf8',
    });
    return /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(stdout)?.[0] ?? '';
  };

  before(async () => {
    pg = await startPostgres({ start: false });
    mounted = { server: join(pg.baseDir, 'mounted-server'), replication: join(pg.baseDir, 'mounted-replication') };
    mkdirSync(mounted.server);
    mkdirSync(mounted.replication);
    mount(issueServer(), issueCertificate(ca, 'replicator', { usage: 'client' }));
    tls = new ServerTls(
      { serverDir: mounted.server, replicationDir: mounted.replication, targetDir: join(pg.baseDir, 'tls'), ...(pg.runAs ? { runAs: pg.runAs } : {}) },
      logger,
    );
    assert.equal(tls.install(), 'installed');
    appendFileSync(
      join(pg.dataDir, 'postgresql.conf'),
      Object.entries(tls.parameters())
        .map(([k, v]) => `${k} = ${renderValue(v)}`)
        .join('\n') + '\n',
    );
    await pg.start().catch((error: Error) => {
      throw new Error(`${error.message}\n${readFileSync(join(pg.baseDir, 'server.log'), 'utf8')}`);
    });
  });
  after(async () => {
    tls?.stop();
    await pg?.stop();
  });

  it('serves TLS a verify-full client accepts by the pod name; keys are 0600 and owned by the server account', async () => {
    const root = join(mounted.server, 'ca.crt');
    assert.equal(await psql(verifyFull(root), 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), 't');
    for (const key of [tls.files.key, tls.files.replicationKey!]) {
      const stat = statSync(key);
      assert.equal(stat.mode & 0o777, 0o600, key);
      assert.equal(stat.uid, pg.runAs?.uid ?? process.getuid!());
    }
    // The replication client certificate is what another member presents: accepted against client-ca.crt.
    const withClientCert = `${verifyFull(tls.files.serverCa)} sslcert=${tls.files.replicationCert} sslkey=${tls.files.replicationKey}`;
    assert.equal(await psql(withClientCert, 'SELECT client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), '/CN=replicator');
  });

  it('refuses a client that trusts another CA, and one that names a host the certificate does not cover', async () => {
    const stranger = join(pg.baseDir, 'stranger.crt');
    writeFileSync(stranger, createCertificateAuthority('stranger').cert);
    await assert.rejects(psql(verifyFull(stranger), 'SELECT 1'), /certificate verify failed/);
    await assert.rejects(psql(verifyFull(join(mounted.server, 'ca.crt')).replace(serverName, 'elsewhere.example'), 'SELECT 1'), /does not match host name/);
  });

  it('a new certificate in the mounted files is served after a reload; the postmaster keeps running', async () => {
    const started = await psql(verifyFull(join(mounted.server, 'ca.crt')), 'SELECT pg_postmaster_start_time()');
    const before = await servedCertificate();
    const next = issueServer();
    mount(next, issueCertificate(ca, 'replicator', { usage: 'client' }));
    let reloads = 0;
    tls.follow(async () => {
      reloads += 1;
      process.kill(Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGHUP');
    }, 50);
    for (let i = 0; i < 200 && (await servedCertificate()).trim() !== next.cert.trim(); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.notEqual(before.trim(), next.cert.trim());
    assert.equal((await servedCertificate()).trim(), next.cert.trim());
    assert.equal(reloads, 1);
    assert.equal(await psql(verifyFull(join(mounted.server, 'ca.crt')), 'SELECT pg_postmaster_start_time()'), started);
    tls.stop();
  });

  it('a member clones from it with connInfo over verify-full TLS by its name under the headless Service, presenting the replication certificate', async () => {
    const peer = { name: 'shop-0' };
    const tlsToPeer = peerConnectionTls(tls.peerTls('shop-headless.default.svc'), peer)!;
    const conninfo = connInfo({ host: pg.host, port: pg.port, user: pg.superuser, password: pg.password, applicationName: 'shop-1', tls: tlsToPeer });
    assert.match(conninfo, /host='shop-0\.shop-headless\.default\.svc' hostaddr='127\.0\.0\.1'/);
    const target = join(pg.baseDir, 'clone');
    const basebackup = (info: string) =>
      run(join(pgBin, 'pg_basebackup'), ['-D', target, '-d', info, '-X', 'none', '-c', 'fast', '--no-sync', '--no-manifest'], {
        env: { ...process.env, PGAPPNAME: 'clone' },
      });
    await basebackup(conninfo);
    assert.ok(statSync(join(target, 'PG_VERSION')).isFile());
    const stranger = join(pg.baseDir, 'stranger-root.crt');
    writeFileSync(stranger, createCertificateAuthority('stranger').cert);
    const untrusting = connInfo({
      host: pg.host,
      port: pg.port,
      user: pg.superuser,
      password: pg.password,
      applicationName: 'shop-1',
      tls: { ...tlsToPeer, rootCert: stranger },
    });
    await assert.rejects(basebackup(untrusting), /certificate verify failed/);
    assert.equal(peerConnectionTls(tls.peerTls('x'), { name: 'source', source: {} }), undefined, "a standby cluster's remote source has its own CA");
  });

  it('material that does not hold together is not copied; the files in use stay', () => {
    const other = issueServer();
    writeFileSync(join(mounted.server, 'tls.key'), other.key);
    assert.equal(tls.install(), 'the server key does not match its certificate');
    writeFileSync(join(mounted.server, 'tls.crt'), other.cert);
    assert.equal(tls.install(), 'installed');
  });
});
