import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createLogger } from '../../../lib/log.js';
import { createCertificateAuthority, issueCertificate, type PemPair } from '../../../lib/tls-certificates.js';
import { serverCertificateHosts } from '../../../operator/certificates/server-names.js';
import { renderValue } from '../../../sidecar/ha-node/postgres/conf.js';
import { PoolerRoleKeeper } from '../../../sidecar/ha-node/postgres/pooler-role.js';
import { ServerTls } from '../../../sidecar/ha-node/postgres/server-tls.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from './support.js';

const logger = createLogger({ name: 'pooler-tls', level: 'silent' });

/**
 * Real PgBouncer 1.18 with the cluster's server TLS Secret mounted: clients reach it over TLS and
 * verify it by the pooler Service's name, PgBouncer's server connections use TLS, plaintext
 * clients still connect, and a renewed certificate is served after a RELOAD.
 */
describe('pooler TLS from the mounted server Secret', { timeout: 120_000 }, () => {
  let postgres: TestPostgres;
  let pooler: TestPooler;
  let mounted: string;
  const ca = createCertificateAuthority('shop.default.keelson.io');
  const issue = (): PemPair => issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: serverCertificateHosts('shop', 'default') });
  const mount = (pair: PemPair) => {
    writeFileSync(join(mounted, 'tls.crt'), pair.cert);
    writeFileSync(join(mounted, 'tls.key'), pair.key);
    writeFileSync(join(mounted, 'ca.crt'), ca.cert);
    writeFileSync(join(mounted, 'client-ca.crt'), ca.cert);
  };
  /** A client of the pooler: verify-full by the pooler Service's name, or plaintext. */
  const connect = async (tls: boolean) => {
    const client = new pg.Client({
      host: pooler.host,
      port: pooler.port,
      user: 'shopper',
      password: 'shopper-secret',
      database: 'postgres',
      ...(tls ? { ssl: { ca: ca.cert, servername: 'shop-pooler-rw.default.svc', rejectUnauthorized: true } } : {}),
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  const peerCertificate = (client: pg.Client): string => {
    const socket = (client as unknown as { connection: { stream: TLSSocket } }).connection.stream;
    return socket.getPeerX509Certificate?.()?.toString() ?? '';
  };

  before(async () => {
    postgres = await startPostgres({ start: false });
    mounted = join(postgres.baseDir, 'mounted');
    mkdirSync(mounted);
    mount(issue());
    const tls = new ServerTls({ serverDir: mounted, targetDir: join(postgres.baseDir, 'tls'), ...(postgres.runAs ? { runAs: postgres.runAs } : {}) }, logger);
    assert.equal(tls.install(), 'installed');
    appendFileSync(
      join(postgres.dataDir, 'postgresql.conf'),
      Object.entries(tls.parameters())
        .map(([k, v]) => `${k} = ${renderValue(v)}`)
        .join('\n') + '\n',
    );
    await postgres.start();
    const dir = scratchDir();
    const passwordFile = poolerPasswordFile(dir, 'pooler-secret');
    await new PoolerRoleKeeper(passwordFile, logger).ensure(async (database) => {
      const client = new pg.Client({ connectionString: postgres.urlFor(database) });
      await client.connect();
      return client;
    }, 'test');
    await postgres.query("CREATE ROLE shopper LOGIN PASSWORD 'shopper-secret'");
    pooler = await startTestPooler({ baseDir: dir, target: { host: postgres.host, port: postgres.port }, passwordFile, tlsDir: mounted });
  });
  after(async () => {
    await pooler?.running.close();
    await postgres?.stop();
  });

  it('a client verifies the pooler by its Service name; PgBouncer reaches PostgreSQL over TLS', async () => {
    const client = await connect(true);
    try {
      assert.equal(peerCertificate(client).trim(), readFileSync(join(mounted, 'tls.crt'), 'utf8').trim());
      const [row] = (await client.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).rows;
      assert.equal(row?.ssl, true, "PgBouncer's server connection is TLS");
    } finally {
      await client.end();
    }
    const plain = await connect(false);
    assert.equal((await plain.query('SELECT 1 AS one')).rows[0].one, 1, 'plaintext clients still connect');
    await plain.end();
    const stranger = new pg.Client({
      host: pooler.host,
      port: pooler.port,
      user: 'shopper',
      password: 'shopper-secret',
      database: 'postgres',
      ssl: { ca: createCertificateAuthority('stranger').cert, servername: 'shop-pooler-rw.default.svc' },
    });
    stranger.on('error', () => undefined);
    await assert.rejects(stranger.connect(), /self[- ]signed|unable to (get|verify)/i);
  });

  // With server TLS, PgBouncer 1.18 recycles every server connection on each RELOAD and drops the
  // logins under way; a dropped login makes it refuse clients that find no server ("server login
  // has been failing") until a login succeeds. Around a switchover two members send the new
  // primary's address (the old primary's hand-over, the new primary's alignment): the second call
  // must leave PgBouncer alone.
  it('a retarget to where the pooler already points keeps its server connections; a RELOAD would replace them', async () => {
    const client = await connect(false);
    const backend = async () => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    try {
      const first = await backend();
      assert.equal(await backend(), first, 'one client reuses its idle server connection');
      await pooler.running.control.retarget(postgres.host, postgres.port);
      assert.equal(await backend(), first, 'the same server connection after a retarget to the same address');
      await pooler.running.admin.command('RELOAD');
      assert.notEqual(await backend(), first, 'a RELOAD replaces it (what the retarget spared)');
    } finally {
      await client.end();
    }
  });

  it('a renewed certificate in the mounted files is served after PgBouncer reloads', async () => {
    const next = issue();
    mount(next);
    const deadline = Date.now() + 40_000;
    let seen = '';
    while (Date.now() < deadline) {
      const client = await connect(true);
      seen = peerCertificate(client);
      await client.end();
      if (seen.trim() === next.cert.trim()) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(seen.trim(), next.cert.trim());
  });
});
