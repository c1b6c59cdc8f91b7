import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as PgClient } from 'pg';
import { createCertificateAuthority, issueCertificate } from '../../../lib/tls-certificates.js';
import { pgbouncerVersion } from '../../../sidecar/exporter/scrape/facts.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { freePort, waitForPort } from '../../support/ports.js';
import { eventually, get, parseMetrics, sharedConfigSubdir, startTestExporter, valueOf } from './helpers.js';

/** Debian's pgbouncer (apt package "pgbouncer"), which like PostgreSQL refuses to run as root. */
const pgbouncerBin = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

describe('pgbouncer admin console mode (URL database "pgbouncer")', () => {
  let pg: TestPostgres;
  let dir: string;
  let bouncer: ChildProcess;
  let port: number;
  const ca = createCertificateAuthority('shop.default.keelson.io');

  before(async () => {
    pg = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'keelson-pgbouncer-'));
    port = await freePort();
    writeFileSync(join(dir, 'userlist.txt'), `"pgbouncer" ""\n"${pg.superuser}" ""\n`);
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `postgres = host=127.0.0.1 port=${pg.port} dbname=postgres`,
        // Transaction pooling: consecutive transactions of one client land on any of the server connections.
        `txn = host=127.0.0.1 port=${pg.port} dbname=postgres user=${pg.superuser} password=${pg.password} pool_mode=transaction pool_size=4`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        `unix_socket_dir = ${dir}`,
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'admin_users = pgbouncer',
        'ignore_startup_parameters = extra_float_digits',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        // TLS for clients as a pooler pod serves it (the server certificate names the pooler Services); plaintext still allowed here.
        'client_tls_sslmode = allow',
        `client_tls_cert_file = ${join(dir, 'server.crt')}`,
        `client_tls_key_file = ${join(dir, 'server.key')}`,
        '',
      ].join('\n'),
    );
    const pair = issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: ['shop-pooler-rw.default.svc'] });
    writeFileSync(join(dir, 'server.crt'), pair.cert);
    writeFileSync(join(dir, 'server.key'), pair.key, { mode: 0o600 });
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'stranger.crt'), createCertificateAuthority('stranger').cert);
    const runAs = pg.runAs;
    if (runAs) for (const f of ['', 'userlist.txt', 'pgbouncer.ini', 'server.crt', 'server.key']) chownSync(join(dir, f), runAs.uid, runAs.gid);
    bouncer = spawn(pgbouncerBin, [join(dir, 'pgbouncer.ini')], { ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}), stdio: 'ignore' });
    await waitForPort('127.0.0.1', port, 10_000);
  });

  after(async () => {
    if (bouncer && bouncer.exitCode === null) {
      const exited = new Promise((r) => bouncer.once('exit', r));
      bouncer.kill('SIGTERM');
      await exited;
    }
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('parses pgbouncer versions the way the collectors expect', () => {
    assert.equal(pgbouncerVersion('PgBouncer 1.18.0'), 11800);
    assert.equal(pgbouncerVersion('PgBouncer 1.24.1'), 12401);
    assert.equal(pgbouncerVersion(''), 0);
  });

  it('plans only the pgbouncer collectors of the shared config for its version and runs them without error', async () => {
    const exporter = await startTestExporter({ url: `postgres://pgbouncer@127.0.0.1:${port}/pgbouncer`, config: sharedConfigSubdir, 'health-interval': '200' });
    try {
      await get(`${exporter.url}/metrics`);
      const metrics = parseMetrics((await get(`${exporter.url}/metrics`)).body);
      const installed = exporter.exporter.main.installed();
      assert.deepEqual(installed.map((r) => r.collector.branch).sort(), [
        'pgbouncer_database_116',
        'pgbouncer_list',
        'pgbouncer_pool_118',
        'pgbouncer_stat_108',
      ]);
      assert.deepEqual(
        installed.filter((r) => r.stats.error > 0).map((r) => `${r.collector.branch}: ${r.lastErrorMessage()}`),
        [],
      );
      assert.equal(valueOf(metrics, 'pgbouncer_up'), 1);
      assert.equal(valueOf(metrics, 'pgbouncer_version'), 11800);
      assert.ok(metrics.families.has('pgbouncer_database_pool_size'), [...metrics.families.keys()].filter((k) => k.startsWith('pgbouncer_')).join(','));
      assert.equal(
        await eventually(
          async () => (await get(`${exporter.url}/primary`)).body,
          (s) => s === 'primary',
          5_000,
        ),
        'primary',
      );
      assert.equal((await get(`${exporter.url}/replica`)).status, 404);
    } finally {
      await exporter.close();
    }
  });

  it("reads the console over TLS as a pooler pod's exporter does: verify-full by the pooler Service's name, dialling the pod's address", async () => {
    const url = (root: string) =>
      `postgres://pgbouncer@shop-pooler-rw.default.svc:${port}/pgbouncer?hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert=${join(dir, root)}`;
    const exporter = await startTestExporter({ url: url('ca.crt'), config: sharedConfigSubdir, 'health-interval': '200' });
    try {
      const metrics = parseMetrics((await get(`${exporter.url}/metrics`)).body);
      assert.equal(valueOf(metrics, 'pgbouncer_up'), 1);
      const admin = new PgClient({ connectionString: `postgres://pgbouncer@127.0.0.1:${port}/pgbouncer` });
      await admin.connect();
      try {
        const clients = (await admin.query<{ user: string; tls: string }>('SHOW CLIENTS')).rows.filter((r) => r.user === 'pgbouncer' && r.tls);
        assert.ok(clients.length > 0, 'the exporter is a TLS client of the console');
      } finally {
        await admin.end();
      }
    } finally {
      await exporter.close();
    }
    const refused = await startTestExporter({ url: url('stranger.crt'), config: sharedConfigSubdir, 'health-interval': '200' });
    try {
      assert.notEqual(valueOf(parseMetrics((await get(`${refused.url}/metrics`)).body), 'pgbouncer_up'), 1, 'a console whose certificate another CA signed');
    } finally {
      await refused.close();
    }
  });

  it('behind a transaction pooler, batched queries fall back to plain text once a prepared statement is lost, and every collector reports', async () => {
    const file = join(dir, 'gauges.yml');
    const names = ['g1', 'g2', 'g3', 'g4', 'g5', 'g6'];
    writeFileSync(file, names.map((name, i) => `${name}:\n  query: SELECT ${i + 1} AS v\n  ttl: 0\n  metrics:\n    - v: { usage: GAUGE }\n`).join(''));
    const exporter = await startTestExporter({ url: `postgres://${pg.superuser}@127.0.0.1:${port}/txn`, config: file, 'auto-discovery': 'false' });
    try {
      const scrapeAll = async (label: string): Promise<void> => {
        const metrics = parseMetrics((await get(`${exporter.url}/metrics`)).body);
        assert.equal(valueOf(metrics, 'pg_up'), 1, label);
        names.forEach((name, i) => assert.equal(valueOf(metrics, `${name}_v`), i + 1, `${label}: ${name}`));
      };
      for (let scrape = 0; scrape < 3; scrape++) await scrapeAll(`scrape ${scrape}`);
      // PgBouncer replaces its server connections to PostgreSQL: the exporter's next transactions
      // run on connections that never saw its prepared statements.
      const admin = new PgClient({ connectionString: `postgres://pgbouncer@127.0.0.1:${port}/pgbouncer` });
      await admin.connect();
      try {
        const serverPids = async (): Promise<string[]> =>
          (await admin.query<{ database: string; remote_pid: string }>('SHOW SERVERS')).rows
            .filter((r) => r.database === 'txn')
            .map((r) => String(r.remote_pid));
        const before = await serverPids();
        assert.ok(before.length > 0, 'the exporter’s server connections before RECONNECT');
        await admin.query('RECONNECT txn');
        // PgBouncer closes the idle ones on its next maintenance pass.
        await eventually(serverPids, (pids) => !pids.some((pid) => before.includes(pid)), 10_000);
      } finally {
        await admin.end();
      }
      for (let scrape = 3; scrape < 6; scrape++) await scrapeAll(`scrape ${scrape}`);
      for (let scrape = 6; scrape < 9; scrape++) await scrapeAll(`scrape ${scrape}`);
      const server = exporter.exporter.main;
      assert.deepEqual(
        server
          .installed()
          .filter((r) => r.stats.error > 0)
          .map((r) => r.collector.name),
        [],
      );
      assert.equal(server.preparesStatements(), false, 'preparing stopped once the server did not know a statement');
    } finally {
      await exporter.close();
    }
  });
});
