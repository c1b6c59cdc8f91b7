import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../../../lib/tls-certificates.js';
import { createLogger } from '../../../../lib/log.js';
import { connInfo } from '../../../../sidecar/ha-node/postgres/conf.js';
import { buildHba } from '../../../../sidecar/ha-node/postgres/hba.js';
import { peerConnectionTls } from '../../../../sidecar/ha-node/postgres/peer-tls.js';
import { ServerTls } from '../../../../sidecar/ha-node/postgres/server-tls.js';
import { pgBin, startPostgres, type TestPostgres } from '../../../support/postgres.js';

const run = promisify(execFile);
const serverName = 'shop-0.shop-headless.default.svc';

/**
 * The pg_hba.conf ha-node writes, on a real PostgreSQL 15 serving the cluster's certificate: every
 * TCP session without TLS is refused (clients, the superuser, replication, and a user's `host`
 * line too), TLS sessions verified against the cluster CA get in by password, a client trusting
 * another CA is refused by its own verify-full, and the local socket stays open. Without TLS the
 * members still reach each other (no hostssl rule that could never match).
 */
describe('pg_hba with TLS required (real PostgreSQL)', { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  let plain: TestPostgres;
  const ca = createCertificateAuthority('shop.default.keelson.io');
  const stranger = createCertificateAuthority('elsewhere.keelson.io');
  let caFile: string;
  let strangerFile: string;
  let clientCerts: { member: string; otherCa: string; otherRole: string };

  const writeHba = (server: TestPostgres, text: string) => {
    writeFileSync(join(server.dataDir, 'pg_hba.conf'), text, { mode: 0o600 });
    if (server.runAs) chownSync(join(server.dataDir, 'pg_hba.conf'), server.runAs.uid, server.runAs.gid);
  };
  /** psql over the Unix socket (the members' own tools connect this way). */
  const local = async (server: TestPostgres, sql: string) =>
    (
      await run(join(pgBin, 'psql'), ['-X', '-At', '-h', server.baseDir, '-p', String(server.port), '-U', server.superuser, '-d', 'postgres', '-c', sql])
    ).stdout.trim();
  const hbaFor = (server: TestPostgres, tls: boolean, userLines: string[] = []) =>
    buildHba({ superuser: server.superuser, replication: 'replicator', userLines, tls, replicationCertificate: tls });
  const reloadWith = async (server: TestPostgres, text: string) => {
    writeHba(server, text);
    await local(server, 'SELECT pg_reload_conf()');
    // The reload is asynchronous: wait until the server reads the rules just written.
    const expected = text.split('\n').filter((line) => /^(local|host)/.test(line)).length;
    for (let i = 0; i < 200; i += 1) {
      if (Number(await local(server, 'SELECT count(*) FROM pg_hba_file_rules WHERE error IS NULL')) === expected) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** psql over TCP with libpq's connection string; the password of `user` in PGPASSWORD. */
  const tcp = async (server: TestPostgres, conninfo: string, sql: string, password = server.password) =>
    (
      await run(join(pgBin, 'psql'), ['-X', '-At', '-d', `port=${server.port} connect_timeout=5 ${conninfo}`, '-c', sql], {
        env: { ...process.env, PGPASSWORD: password },
      })
    ).stdout.trim();
  const verifyFull = (server: TestPostgres, root: string) => `host=${serverName} hostaddr=${server.host} sslmode=verify-full sslrootcert=${root}`;

  before(async () => {
    pg = await startPostgres({
      start: false,
      settings: { ssl: 'on', ssl_cert_file: `'server.crt'`, ssl_key_file: `'server.key'`, ssl_ca_file: `'client-ca.crt'` },
    });
    const pair = issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: ['shop-rw', '*.shop-headless.default.svc'] });
    for (const [file, content] of [
      ['server.crt', pair.cert],
      ['server.key', pair.key],
      ['client-ca.crt', ca.cert],
    ] as const) {
      writeFileSync(join(pg.dataDir, file), content, { mode: 0o600 });
      if (pg.runAs) chownSync(join(pg.dataDir, file), pg.runAs.uid, pg.runAs.gid);
    }
    await pg.start();
    const certs = join(pg.baseDir, 'client');
    mkdirSync(certs);
    caFile = join(certs, 'ca.crt');
    strangerFile = join(certs, 'stranger.crt');
    writeFileSync(caFile, ca.cert);
    writeFileSync(strangerFile, stranger.cert);
    // Client certificates as a member holds them (libpq wants the key 0600).
    const clientPair = (name: string, pair: { cert: string; key: string }) => {
      writeFileSync(join(certs, `${name}.crt`), pair.cert);
      writeFileSync(join(certs, `${name}.key`), pair.key, { mode: 0o600 });
      return `sslcert=${join(certs, `${name}.crt`)} sslkey=${join(certs, `${name}.key`)}`;
    };
    clientCerts = {
      member: clientPair('replicator', issueCertificate(ca, 'replicator', { usage: 'client' })),
      otherCa: clientPair('stranger-replicator', issueCertificate(stranger, 'replicator', { usage: 'client' })),
      otherRole: clientPair('app-client', issueCertificate(ca, 'app', { usage: 'client' })),
    };
    plain = await startPostgres();
    for (const server of [pg, plain]) {
      await local(server, "CREATE ROLE replicator LOGIN REPLICATION PASSWORD 'rep-secret'");
      await local(server, "CREATE ROLE app LOGIN PASSWORD 'app-secret'");
    }
    await reloadWith(pg, hbaFor(pg, true));
    await reloadWith(plain, hbaFor(plain, false));
  });
  after(async () => {
    await pg?.stop();
    await plain?.stop();
  });

  it('refuses sslmode=disable over TCP for clients, the superuser and replication', async () => {
    for (const [user, password, extra] of [
      ['app', 'app-secret', 'dbname=postgres'],
      [pg.superuser, pg.password, 'dbname=postgres'],
      ['replicator', 'rep-secret', 'replication=true'],
    ] as const) {
      await assert.rejects(
        tcp(pg, `host=${pg.host} sslmode=disable user=${user} ${extra}`, user === 'replicator' ? 'IDENTIFY_SYSTEM' : 'SELECT 1', password),
        /pg_hba\.conf rejects (replication )?connection .* no encryption/,
        `${user} without TLS`,
      );
    }
  });

  it('lets verify-full clients in by password against the cluster CA; the local socket stays open', async () => {
    const ssl = await tcp(pg, `${verifyFull(pg, caFile)} user=app dbname=postgres`, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()', 'app-secret');
    assert.equal(ssl, 't');
    await assert.rejects(tcp(pg, `${verifyFull(pg, caFile)} user=app dbname=postgres`, 'SELECT 1', 'wrong'), /password authentication failed/);
    assert.equal(await local(pg, 'SELECT 1'), '1');
  });

  it('replication takes the client certificate the client CA signed for the role, and nothing else', async () => {
    const replication = (cert: string, password = 'rep-secret') =>
      tcp(pg, `${verifyFull(pg, caFile)} user=replicator replication=true ${cert}`, 'IDENTIFY_SYSTEM', password);
    assert.match(await replication(clientCerts.member, 'not-the-password'), /^\d+\|1\|/, 'the certificate alone lets a replica stream');
    await assert.rejects(
      replication(''),
      /certificate authentication failed|connection requires a valid client certificate/,
      'no certificate, even with the password',
    );
    await assert.rejects(replication(clientCerts.otherCa), /certificate verify failed|unknown ca|certificate unknown/i, 'a certificate of another CA');
    await assert.rejects(replication(clientCerts.otherRole), /certificate authentication failed/, 'a certificate for another role');
  });

  it("a standby cluster streams from its source with the copy of the source's replication Secret (ServerTls, peer-tls)", async () => {
    // The standby's own cluster has another CA; the source's Secret is mounted at sourceDir (tls.crt, tls.key, ca.crt).
    const own = createCertificateAuthority('standby.default.keelson.io');
    const mounted = join(pg.baseDir, 'standby-mounts');
    const dirs = { server: join(mounted, 'server'), source: join(mounted, 'source') };
    const ownServer = issueCertificate(own, 'standby-rw', { usage: 'server', hosts: ['standby-rw'] });
    const files: [string, string][] = [
      [join(dirs.server, 'tls.crt'), ownServer.cert],
      [join(dirs.server, 'tls.key'), ownServer.key],
      [join(dirs.server, 'ca.crt'), own.cert],
      [join(dirs.server, 'client-ca.crt'), own.cert],
    ];
    for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
    for (const [file, content] of files) writeFileSync(file, content);
    const tls = new ServerTls(
      { serverDir: dirs.server, sourceDir: dirs.source, targetDir: join(mounted, 'copies'), ...(pg.runAs ? { runAs: pg.runAs } : {}) },
      createLogger({ name: 'hba-tls', level: 'silent' }),
    );
    const source = { name: 'standby_cluster', source: { host: pg.host, server_name: 'shop-rw' } };
    const identify = () => {
      const conn = connInfo({
        host: pg.host,
        port: pg.port,
        user: 'replicator',
        password: 'rep-secret',
        applicationName: 'standby-0',
        tls: peerConnectionTls(tls.peerTls('standby-headless.default.svc'), source),
      });
      return tcp(pg, `${conn} replication=true`, 'IDENTIFY_SYSTEM', 'rep-secret');
    };
    // No copy yet (the optional volume is empty): no file to present, so the source refuses.
    assert.equal(tls.install(), 'installed');
    await assert.rejects(identify(), /source-ca\.crt|root certificate file .* does not exist/);
    // The operator copies the source's replication Secret: certificate and CA of the source's own CA.
    const replication = issueCertificate(ca, 'replicator', { usage: 'client' });
    writeFileSync(join(dirs.source, 'tls.crt'), replication.cert);
    writeFileSync(join(dirs.source, 'tls.key'), replication.key);
    writeFileSync(join(dirs.source, 'ca.crt'), ca.cert);
    assert.equal(tls.install(), 'installed');
    assert.equal(statSync(tls.files.sourceKey!).mode & 0o777, 0o600, 'the key copy is private');
    assert.match(await identify(), /^\d+\|1\|/, 'verify-full by the source name, the certificate the source signed');
    // A copy whose key does not match never holds the server's own files back; the working copy stays.
    writeFileSync(join(dirs.source, 'tls.key'), issueCertificate(ca, 'replicator', { usage: 'client' }).key);
    writeFileSync(join(dirs.server, 'client-ca.crt'), `${own.cert}${ca.cert}`);
    assert.equal(tls.install(), 'installed');
    assert.equal(readFileSync(tls.files.clientCa, 'utf8'), `${own.cert}${ca.cert}`);
    assert.match(await identify(), /^\d+\|1\|/, 'still streams with the copy that worked');
    // An external source (no server_name) is reached as before: libpq defaults, by password.
    const external = peerConnectionTls(tls.peerTls('standby-headless.default.svc'), { name: 'standby_cluster', source: {} });
    assert.equal(external, undefined);
  });

  it('a client that trusts another CA is refused by verify-full', async () => {
    await assert.rejects(tcp(pg, `${verifyFull(pg, strangerFile)} user=app dbname=postgres`, 'SELECT 1', 'app-secret'), /certificate verify failed/);
  });

  it("a user's host line only matches TLS sessions: the rejects come first", async () => {
    await reloadWith(pg, hbaFor(pg, true, ['local all all trust', 'host all app 0.0.0.0/0 scram-sha-256']));
    try {
      await assert.rejects(tcp(pg, `host=${pg.host} sslmode=disable user=app dbname=postgres`, 'SELECT 1', 'app-secret'), /no encryption/);
      assert.equal(await tcp(pg, `${verifyFull(pg, caFile)} user=app dbname=postgres`, 'SELECT 1', 'app-secret'), '1');
      await assert.rejects(tcp(pg, `${verifyFull(pg, caFile)} user=replicator dbname=postgres`, 'SELECT 1', 'rep-secret'), /no pg_hba\.conf entry/);
    } finally {
      await reloadWith(pg, hbaFor(pg, true));
    }
  });

  it('without TLS the members are not locked out: plaintext replication and clients by password', async () => {
    const text = hbaFor(plain, false);
    assert.doesNotMatch(text, /hostssl|hostnossl/);
    const identify = await tcp(plain, `host=${plain.host} sslmode=disable user=replicator replication=true`, 'IDENTIFY_SYSTEM', 'rep-secret');
    assert.match(text, /host {4}replication {2}"replicator" {2}0\.0\.0\.0\/0 {2}scram-sha-256/, 'by password: no certificate without TLS');
    assert.match(identify, /^\d+\|1\|/);
    assert.equal(await tcp(plain, `host=${plain.host} sslmode=disable user=app dbname=postgres`, 'SELECT 1', 'app-secret'), '1');
  });
});
