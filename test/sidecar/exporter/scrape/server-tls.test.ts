import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority } from '../../../../lib/tls-certificates.js';
import { createPool, normalizeUrl } from '../../../../sidecar/exporter/scrape/connection.js';
import type { TestPostgres } from '../../../support/postgres.js';
import { shopPeerSuffix, startTlsPostgres } from '../../../support/tls-postgres.js';
import { get, parseMetrics, startTestExporter, valueOf } from '../helpers.js';

const serverName = `shop-0.${shopPeerSuffix}`;

/**
 * The exporter reaches a real PostgreSQL 15 serving the cluster's kind of certificate as the
 * operator points it there: verify-full against the CA file by the pod's name under the headless
 * Service, connecting to the address in hostaddr.
 */
describe('exporter over verify-full TLS', { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  const ca = createCertificateAuthority('shop.default.keelson.io');
  const stranger = createCertificateAuthority('stranger');
  let caFile: string;
  let strangerFile: string;
  const urlFor = (root: string, name = serverName): string =>
    normalizeUrl(
      `postgres://${pg.superuser}:${encodeURIComponent(pg.password)}@${name}:${pg.port}/postgres?hostaddr=${pg.host}&sslmode=verify-full&sslrootcert=${encodeURIComponent(root)}`,
    );
  const sslOfSession = async (url: string): Promise<unknown> => {
    const pool = createPool({ url, max: 1, connectTimeoutMs: 5_000, applicationName: 'exporter-tls-test' });
    try {
      return (await pool.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).rows[0]?.ssl;
    } finally {
      await pool.end();
    }
  };

  before(async () => {
    pg = await startTlsPostgres(ca);
    caFile = join(pg.baseDir, 'ca.crt');
    strangerFile = join(pg.baseDir, 'stranger.crt');
    writeFileSync(caFile, ca.cert);
    writeFileSync(strangerFile, stranger.cert);
  });
  after(async () => {
    await pg?.stop();
  });

  it('scrapes over TLS, checking the certificate against the name while connecting to hostaddr', async () => {
    assert.equal(await sslOfSession(urlFor(caFile)), 't');
    const running = await startTestExporter({ url: urlFor(caFile), 'auto-discovery': 'false' });
    try {
      const metrics = parseMetrics((await get(`${running.url}/metrics`)).body);
      assert.equal(valueOf(metrics, 'pg_up'), 1);
    } finally {
      await running.close();
    }
  });

  it('refuses a server whose certificate another CA signed, or that does not name the host', async () => {
    await assert.rejects(sslOfSession(urlFor(strangerFile)), /self[- ]signed|unable to (get|verify)|certificate/i);
    await assert.rejects(sslOfSession(urlFor(caFile, 'shop-0.other-headless.default.svc')), /altnames|does not match|Hostname/i);
  });

  it('reads the CA file again for each new connection: a rotated bundle is trusted without a restart', async () => {
    const rotating = join(pg.baseDir, 'rotating.crt');
    copyFileSync(strangerFile, rotating);
    const pool = createPool({ url: urlFor(rotating), max: 1, connectTimeoutMs: 5_000, applicationName: 'exporter-tls-test' });
    try {
      await assert.rejects(pool.query('SELECT 1'), /self[- ]signed|unable to (get|verify)|certificate/i);
      writeFileSync(rotating, stranger.cert + ca.cert);
      assert.equal((await pool.query('SELECT 1 AS one')).rows[0]?.one, '1');
    } finally {
      await pool.end();
    }
  });

  it('refuses URLs whose TLS parameters cannot work, naming the parameter', () => {
    const base = `postgres://u@${serverName}:5432/postgres`;
    assert.throws(() => normalizeUrl(`${base}?hostaddr=127.0.0.1`), /hostaddr needs sslmode=verify-full/);
    assert.throws(() => normalizeUrl(`${base}?sslmode=verify-full`), /needs sslrootcert/);
    assert.throws(() => normalizeUrl(`${base}?sslmode=verify-full&sslrootcert=/ca.crt&hostaddr=not-an-ip`), /hostaddr must be an IP address/);
    assert.match(normalizeUrl(`${base}?sslmode=verify-full&sslrootcert=/ca.crt&hostaddr=10.1.2.3`), /hostaddr=10\.1\.2\.3/);
  });
});
