import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { databaseOf, maskUrl, normalizeUrl, urlForDatabase } from '../../../sidecar/exporter/scrape/connection.js';
import { defaultUrl, parseConstantLabels, resolveExporterOptions, resolveUrl } from '../../../sidecar/exporter/options.js';

describe('exporter options: flags, environment, defaults', () => {
  it('has pg_exporter defaults', () => {
    const o = resolveExporterOptions({}, {});
    assert.equal(o.url, defaultUrl);
    assert.deepEqual(o.listenAddresses, [':9630']);
    assert.equal(o.telemetryPath, '/metrics');
    assert.equal(o.autoDiscovery, true);
    assert.deepEqual(o.excludeDatabases, ['template0', 'template1', 'postgres']);
    assert.equal(o.connectTimeoutMs, 100);
    assert.equal(o.namespace, 'pg');
    assert.equal(o.configPath, undefined, 'no --config: the built-in set');
    assert.equal(o.authScope, 'all');
  });

  it('reads the PG_EXPORTER_* environment, and flags win over it', () => {
    const env = {
      PG_EXPORTER_DISABLE_CACHE: 'true',
      PG_EXPORTER_AUTO_DISCOVERY: 'false',
      PG_EXPORTER_TAG: 'a, b',
      PG_EXPORTER_CONNECT_TIMEOUT: '250',
      PG_EXPORTER_LABEL: 'env=prod',
      PG_EXPORTER_CONFIG: '/etc/x.yml',
      PG_EXPORTER_NAMESPACE: 'db',
    };
    const fromEnv = resolveExporterOptions({}, env);
    assert.equal(fromEnv.disableCache, true);
    assert.equal(fromEnv.autoDiscovery, false);
    assert.deepEqual(fromEnv.serverTags, ['a', 'b']);
    assert.equal(fromEnv.connectTimeoutMs, 250);
    assert.deepEqual(fromEnv.constantLabels, { env: 'prod' });
    assert.equal(fromEnv.configPath, '/etc/x.yml');
    assert.equal(fromEnv.namespace, 'db');
    const fromFlags = resolveExporterOptions({ 'disable-cache': 'false', 'auto-discovery': true, 'connect-timeout': '50', label: 'env=dev' }, env);
    assert.equal(fromFlags.disableCache, false);
    assert.equal(fromFlags.autoDiscovery, true);
    assert.equal(fromFlags.connectTimeoutMs, 50);
    assert.deepEqual(fromFlags.constantLabels, { env: 'dev' });
  });

  it('takes the URL from --url, PG_EXPORTER_URL, PGURL, then PG_EXPORTER_URL_FILE, adding sslmode=disable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-exporter-url-'));
    try {
      writeFileSync(join(dir, 'url'), 'postgres://f:p@h3:5432/x\n');
      const env = { PG_EXPORTER_URL: 'postgres://a@h1/db', PGURL: 'postgres://b@h2/db', PG_EXPORTER_URL_FILE: join(dir, 'url') };
      assert.match(resolveUrl('postgres://flag@h0/db', env), /^postgres:\/\/flag@h0\/db\?sslmode=disable$/);
      assert.match(resolveUrl(undefined, env), /@h1\//);
      assert.match(resolveUrl(undefined, { ...env, PG_EXPORTER_URL: '' }), /@h2\//);
      assert.match(resolveUrl(undefined, { PG_EXPORTER_URL_FILE: join(dir, 'url') }), /@h3:5432\/x\?sslmode=disable/);
      assert.equal(resolveUrl(undefined, {}), defaultUrl);
      assert.match(resolveUrl('postgres://a@h/db?sslmode=require', {}), /sslmode=require$/);
      assert.throws(() => resolveUrl(undefined, { PG_EXPORTER_URL_FILE: join(dir, 'missing') }), /PG_EXPORTER_URL_FILE/);
      assert.throws(() => resolveUrl('mysql://x', {}), /scheme must be postgres/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects bad values with the key named', () => {
    assert.throws(() => resolveExporterOptions({ 'connect-timeout': 'soon' }, {}), /connect-timeout/);
    assert.throws(() => resolveExporterOptions({ 'disable-cache': 'maybe' }, {}), /disable-cache/);
    assert.throws(() => resolveExporterOptions({ 'health-interval': '10' }, {}), /"health-interval" \(from flag --health-interval\): expected an integer ≥ 50/);
    assert.throws(() => resolveExporterOptions({}, { PG_EXPORTER_CONNECT_TIMEOUT: '1.5' }), /"connect-timeout" \(from env PG_EXPORTER_CONNECT_TIMEOUT\)/);
    assert.throws(() => resolveExporterOptions({ 'web.auth-scope': 'some' }, {}), /web\.auth-scope.*expected one of all, admin/);
    assert.throws(() => resolveExporterOptions({ 'web.telemetry-path': 'metrics' }, {}), /canonical absolute path/);
    assert.throws(() => resolveExporterOptions({ 'web.telemetry-path': '/a/../metrics' }, {}), /canonical absolute path/);
    assert.throws(() => resolveExporterOptions({ 'web.telemetry-path': '/%72eload' }, {}), /clashes with a built-in endpoint/);
  });

  it('skips invalid constant labels with a warning', () => {
    const warnings: string[] = [];
    assert.deepEqual(parseConstantLabels('a=1, 9bad=2,noequals,b = two ,', warnings), { a: '1', b: 'two' });
    assert.equal(warnings.length, 2);
  });

  it('derives URLs for discovered databases and masks passwords', () => {
    assert.equal(databaseOf('postgres://u:p@h:5432/app?sslmode=disable'), 'app');
    assert.equal(databaseOf('postgres://u@h/?dbname=other'), 'other');
    assert.equal(urlForDatabase('postgres://u:p@h:5432/postgres?sslmode=disable', 'my db'), 'postgres://u:p@h:5432/my%20db?sslmode=disable');
    assert.match(urlForDatabase('postgres://u@h/?dbname=a', 'b'), /dbname=b/);
    assert.equal(maskUrl('postgres://u:secret@h/db'), 'postgres://u:xxxxx@h/db');
    assert.equal(normalizeUrl('postgresql://h/db'), 'postgresql://h/db?sslmode=disable');
    assert.equal(resolveExporterOptions({ url: 'postgres://u@h:6432/pgbouncer' }, {}).namespace, 'pgbouncer');
  });
});
