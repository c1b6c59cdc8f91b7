import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createCertificateAuthority, issueCertificate } from '../../lib/tls-certificates.js';
import { superPassword, startCluster, type TestCluster } from '../sidecar/ha-node/harness.js';
import { callMember } from '../../ctl/client.js';
import { runCtl } from './ctl-runner.js';

const scope = 'qtls';

/**
 * `keelson ctl query` against a live member whose PostgreSQL serves the cluster's kind of
 * certificate (real PostgreSQL 15 and ha-node, Lease DCS on the API server stand-in): verify-full
 * by the member's name under the headless Service, with the CA given or read from the cluster's
 * Secret; a CA that did not sign the certificate is refused.
 */
describe('keelson ctl query over verify-full TLS', { timeout: 180_000 }, () => {
  let cluster: TestCluster;
  let dir: string;
  const ca = createCertificateAuthority(`${scope}.default.keelson.io`);
  const stranger = createCertificateAuthority('stranger');
  const viaLeases = (): string[] => ['--cluster', scope, '--namespace', 'default', '--kubeconfig', cluster.api.kubeconfigPath];
  const sslOfSession = ['query', '--command', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()', '-o', 'json'];

  before(async () => {
    process.env.PGPASSWORD = superPassword;
    dir = mkdtempSync(join(tmpdir(), 'keelson-ctl-query-tls-'));
    const pair = issueCertificate(ca, `${scope}-rw`, { usage: 'server', hosts: [`*.${scope}-headless.default.svc`] });
    for (const [file, content] of [
      ['tls.crt', pair.cert],
      ['tls.key', pair.key],
      ['ca.crt', ca.cert],
      ['client-ca.crt', ca.cert],
      ['stranger.crt', stranger.cert],
    ])
      writeFileSync(join(dir, file), content);
    cluster = await startCluster({ scope, members: 1, env: { KEELSON_SERVER_TLS_DIR: dir } });
    await cluster.waitFor('a leader', async () => (await cluster.leaderName()) !== undefined, 120_000);
  });
  after(async () => {
    delete process.env.PGPASSWORD;
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the member with --sslrootcert (verify-full by default once a CA is given)', async () => {
    // The member's REST API serves HTTPS too: without the cluster's Secret yet, --cacert is its CA.
    const result = await runCtl([...viaLeases(), '--cacert', join(dir, 'ca.crt'), ...sslOfSession, '--sslrootcert', join(dir, 'ca.crt')]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [{ ssl: true }]);
  });

  it('refuses a member whose certificate another CA signed', async () => {
    const result = await runCtl([...viaLeases(), '--cacert', join(dir, 'ca.crt'), ...sslOfSession, '--sslrootcert', join(dir, 'stranger.crt')]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /certificate/i);
  });

  it("reads the CA from the cluster's <cluster>-server-tls Secret when none is given", async () => {
    const core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: `${scope}-server-tls` }, type: 'kubernetes.io/tls', data: { 'ca.crt': Buffer.from(ca.cert).toString('base64') } },
    });
    const result = await runCtl([...viaLeases(), ...sslOfSession]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [{ ssl: true }]);
    // The member serves TLS, so ha-node's pg_hba refuses every remote session without it.
    const plain = await runCtl([...viaLeases(), ...sslOfSession, '--sslmode', 'disable']);
    assert.notEqual(plain.code, 0);
    assert.match(plain.stderr, /pg_hba\.conf rejects connection .* no encryption/, '--sslmode disable is refused by pg_hba');
  });

  it('refuses verify-full without a CA, naming the flag', async () => {
    const result = await runCtl([
      '--url',
      cluster.members[0]!.apiUrl.replace('http://', 'https://'),
      '--insecure',
      ...sslOfSession,
      '--sslmode',
      'verify-full',
    ]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--sslmode verify-full needs the CA/);
  });

  it('PATCH /config on this member refuses pg_hba lines that would weaken its TLS rules, naming the line', async () => {
    const url = cluster.members[0]!.apiUrl.replace('http://', 'https://');
    const patch = (pg_hba: string[]) => callMember(url, 'PATCH', '/config', { db: { pg_hba } }, { insecure: true, timeoutMs: 30_000 });
    for (const line of ['hostnossl all all 0.0.0.0/0 scram-sha-256', 'host all all 10.0.0.0/8 trust']) {
      const refused = await patch([line]);
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /db\.pg_hba\[0\]/, line);
    }
    const stored = JSON.parse((await callMember(url, 'GET', '/config', undefined, { insecure: true, timeoutMs: 30_000 })).text) as {
      db?: { pg_hba?: string[] };
    };
    assert.deepEqual(stored.db?.pg_hba ?? [], [], 'nothing was written');
  });
});
