import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../lib/http.js';
import type { LeaseDcs } from '../../sidecar/ha-node/dcs/lease-dcs.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { dcsFor, memberRecord, serveOpsApp, snapshotFor } from '../sidecar/ha-node/ops/support.js';
import { runCtl } from './ctl-runner.js';

/**
 * `keelson ctl` against one member whose API is served over HTTPS with a self-signed certificate
 * (the "optional TLS" of the issue) and a bearer token, over a real Lease DCS.
 */
describe('keelson ctl over https with a bearer token', () => {
  let api: TestApiServer;
  let dcs: LeaseDcs;
  let server: RunningServer;
  let dir: string;
  let base: string;

  const ctl = (args: string[]) => runCtl(['--url', base, '--token', 'tls-token', ...args]);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-ctl-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    api = await startTestApiServer();
    dcs = dcsFor(api, 'tls', 'a');
    await dcs.start();
    await dcs.getCluster();
    await dcs.attemptToAcquireLeader(1);
    await dcs.setConfig({ ttl: 30, loop_wait: 10, retry_timeout: 10 });
    ({ server } = await serveOpsApp(
      dcs,
      snapshotFor('a', 'tls', dcs),
      { credentials: { token: 'tls-token' } },
      { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) },
    ));
    base = server.url.replace(/\/$/, '');
    await dcs.touchMember(memberRecord('a', `${base}/ha`, { role: 'primary' }));
  });

  after(async () => {
    await server?.close();
    dcs?.stop();
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an unknown certificate (exit 3), trusts --cacert, and --insecure skips the check', async () => {
    assert.ok(base.startsWith('https://'), base);
    const untrusted = await ctl(['show-config']);
    assert.equal(untrusted.code, 3);
    assert.match(untrusted.stderr, /self[- ]signed certificate/i);
    const trusted = await ctl(['--cacert', join(dir, 'cert.pem'), 'show-config', '-o', 'json']);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.deepEqual(JSON.parse(trusted.stdout), { ttl: 30, loop_wait: 10, retry_timeout: 10 });
    assert.equal((await ctl(['--insecure', 'show-config'])).code, 0);
  });

  it('mutates with the bearer token: edit-config --set, pause and resume', async () => {
    const ca = ['--cacert', join(dir, 'cert.pem')];
    const edited = await ctl([...ca, 'edit-config', '--set', 'ttl=31', '--set', 'maximum_lag_on_failover=0', '--force', '-o', 'json']);
    assert.equal(edited.code, 0, edited.stderr + edited.stdout);
    assert.deepEqual(JSON.parse(edited.stdout), { ttl: 31, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 0 });
    const invalid = await ctl([...ca, 'edit-config', '--set', 'loop_wait=-1', '--force']);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stdout, /"loop_wait" must be an integer from 1 to 600/);
    const unchanged = await ctl([...ca, 'edit-config', '--set', 'ttl=31', '--force']);
    assert.deepEqual([unchanged.code, unchanged.stdout], [0, 'Not changed\n']);
    assert.equal((await ctl([...ca, 'pause'])).code, 0);
    assert.equal((await dcs.getCluster()).config?.pause, true);
    assert.equal((await ctl([...ca, 'resume'])).code, 0);
    assert.equal((await dcs.getCluster()).config?.pause, undefined);
    const wrongToken = await ctl([...ca, '--token', 'nope', 'pause']);
    assert.equal(wrongToken.code, 1);
    assert.match(wrongToken.stdout, /HTTP 401/);
  });

  it('a confirmation is required without --force when nobody can answer (exit 2)', async () => {
    const r = await ctl(['--cacert', join(dir, 'cert.pem'), 'edit-config', '--set', 'ttl=32']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /use --force/);
  });
});
