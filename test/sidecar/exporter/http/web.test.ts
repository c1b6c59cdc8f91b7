import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { loadWebConfig } from '../../../../sidecar/exporter/http/webconfig.js';
import { freePort } from '../../../support/ports.js';
import { get, parseMetrics, startTestExporter, valueOf } from '../helpers.js';

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

function httpsGet(url: string, ca: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('--web.config.file: basic auth and TLS (exporter-toolkit format)', () => {
  let dir: string;
  let deadUrl: string;
  let cert: Buffer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-exporter-web-'));
    // No database behind this URL: these tests are about the listener, and pg_up 0 is still a 200 scrape.
    deadUrl = `postgres://nobody:secret@127.0.0.1:${await freePort()}/postgres`;
    const hash = await bcrypt.hash('s3cret', 10);
    writeFileSync(join(dir, 'auth.yml'), `basic_auth_users:\n  prometheus: ${hash}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n`);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    writeFileSync(join(dir, 'tls.yml'), `tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  prometheus: ${hash}\n`);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('protects every endpoint by default: 401 without or with wrong credentials, 200 with them', async () => {
    const exporter = await startTestExporter({ url: deadUrl, 'web.config.file': join(dir, 'auth.yml'), 'auto-discovery': 'false' });
    try {
      const anonymous = await get(`${exporter.url}/metrics`);
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers.get('www-authenticate'), 'Basic');
      assert.equal((await get(`${exporter.url}/metrics`, { headers: basic('prometheus', 'wrong') })).status, 401);
      assert.equal((await get(`${exporter.url}/metrics`, { headers: basic('someone', 's3cret') })).status, 401);
      assert.equal((await get(`${exporter.url}/up`)).status, 401);
      assert.equal((await get(`${exporter.url}/reload`, { method: 'POST' })).status, 401);
      const ok = await get(`${exporter.url}/metrics`, { headers: basic('prometheus', 's3cret') });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('x-frame-options'), 'deny', 'http_server_config headers are sent');
      assert.equal(valueOf(parseMetrics(ok.body), 'pg_up'), 0);
      assert.equal((await get(`${exporter.url}/up`, { headers: basic('prometheus', 's3cret') })).status, 503);
    } finally {
      await exporter.close();
    }
  });

  it('--web.auth-scope admin protects /reload, /explain and /stat while /metrics and health stay open', async () => {
    const exporter = await startTestExporter({ url: deadUrl, 'web.config.file': join(dir, 'auth.yml'), 'web.auth-scope': 'admin', 'auto-discovery': 'false' });
    try {
      assert.equal((await get(`${exporter.url}/metrics`)).status, 200);
      assert.equal((await get(`${exporter.url}/up`)).status, 503);
      for (const path of ['/reload', '/explain', '/stat']) assert.equal((await get(`${exporter.url}${path}`)).status, 401, path);
      assert.equal((await get(`${exporter.url}/explain`, { headers: basic('prometheus', 's3cret') })).status, 200);
      const reload = await get(`${exporter.url}/reload`, { method: 'POST', headers: basic('prometheus', 's3cret') });
      assert.equal(reload.status, 200);
      assert.equal(reload.body, 'server reloaded');
    } finally {
      await exporter.close();
    }
  });

  it('serves HTTPS with the configured certificate (and auth on top)', async () => {
    const exporter = await startTestExporter({ url: deadUrl, 'web.config.file': join(dir, 'tls.yml'), 'auto-discovery': 'false' });
    try {
      assert.match(exporter.url, /^https:\/\//);
      assert.equal((await httpsGet(`${exporter.url}/metrics`, cert)).status, 401);
      const ok = await httpsGet(`${exporter.url}/metrics`, cert, basic('prometheus', 's3cret'));
      assert.equal(ok.status, 200);
      assert.equal(valueOf(parseMetrics(ok.body), 'pg_up'), 0);
      await assert.rejects(get(exporter.url.replace('https:', 'http:') + '/metrics'), 'plain HTTP is not served on a TLS port');
    } finally {
      await exporter.close();
    }
  });

  it('rejects bad web config files with the field named', () => {
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    assert.throws(() => loadWebConfig(write('w1.yml', 'basic_auth_user:\n  a: b\n')), /w1\.yml: field "basic_auth_user": unknown field/);
    assert.throws(() => loadWebConfig(write('w2.yml', 'basic_auth_users:\n  a: plaintext\n')), /w2\.yml: field "basic_auth_users\.a": must be a bcrypt hash/);
    assert.throws(
      () => loadWebConfig(write('w3.yml', 'tls_server_config:\n  cert_file: missing.pem\n  key_file: key.pem\n')),
      /w3\.yml: field "tls_server_config\.cert_file": cannot read .*missing\.pem: ENOENT/,
    );
    assert.throws(
      () => loadWebConfig(write('w4.yml', 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_auth_type: RequireAndVerifyClientCert\n')),
      /client_auth_type": RequireAndVerifyClientCert is not supported/,
    );
    assert.throws(() => loadWebConfig(write('w5.yml', 'tls_server_config:\n  cert_file: cert.pem\n')), /tls_server_config\.key_file": is required/);
    assert.throws(() => loadWebConfig(join(dir, 'absent.yml')), /absent\.yml: field "\(file\)": cannot read/);
  });
});
