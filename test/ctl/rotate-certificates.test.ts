import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import { createCertificateAuthority } from '../../lib/tls-certificates.js';
import { installCrds } from '../../local/cluster/stack.js';
import { servedCertificate } from '../../ctl/served-certificate.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { startTlsPostgres } from '../support/tls-postgres.js';
import { runCtl } from './ctl-runner.js';

/**
 * `keelson ctl rotate-certificates` where it must refuse or give up (API server stand-in, no
 * operator): an unknown cluster, certificates the user brings, a timeout naming what was awaited;
 * and the handshake it checks members with, against a real PostgreSQL. The rotation itself, under
 * writers, is test/operator/rotation-e2e.test.ts.
 */
describe('keelson ctl rotate-certificates: refusals and the served certificate', { timeout: 120_000 }, () => {
  let server: TestApiServer;
  let api: OperatorKubeApi;
  const ns = 'default';
  const viaApi = (cluster: string) => ['--cluster', cluster, '--namespace', ns, '--kubeconfig', server.kubeconfigPath];
  const createCluster = (name: string, certificates: Record<string, string> = {}) =>
    api.custom.createNamespacedCustomObject({
      group: 'keelson.io',
      version: 'v1',
      namespace: ns,
      plural: 'databaseclusters',
      body: {
        apiVersion: 'keelson.io/v1',
        kind: 'DatabaseCluster',
        metadata: { name, namespace: ns },
        spec: { instances: 1, storage: { size: '1Gi' }, certificates },
      },
    });

  before(async () => {
    server = await startTestApiServer();
    api = new OperatorKubeApi(server.kubeConfig);
    await installCrds(server.kubeConfig, createLogger({ name: 'rotate-ctl', level: 'silent' }));
  });
  after(async () => {
    await server?.close();
  });

  it('an unknown cluster is refused by name', async () => {
    const result = await runCtl(['rotate-certificates', ...viaApi('nope')]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'keelson ctl: no DatabaseCluster "nope" in namespace default\n');
  });

  it("a cluster with the user's certificates is refused: the operator does not rotate them", async () => {
    await createCluster('own', { serverCASecret: 'my-ca', serverTLSSecret: 'my-tls' });
    const result = await runCtl(['rotate-certificates', ...viaApi('own')]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /spec\.certificates\.serverTLSSecret names the user's Secret "my-tls": the operator does not rotate certificates it did not issue/,
    );
    const annotations = (
      await api.custom.getNamespacedCustomObject({ group: 'keelson.io', version: 'v1', namespace: ns, plural: 'databaseclusters', name: 'own' })
    ).metadata?.annotations;
    assert.equal(annotations?.['keelson.io/rotate-certificates'], undefined, 'nothing requested');

    await createCluster('ownca', { serverCASecret: 'my-ca' });
    const ca = await runCtl(['rotate-certificates', '--ca', ...viaApi('ownca')]);
    assert.equal(ca.code, 1);
    assert.match(ca.stderr, /spec\.certificates\.serverCASecret names the user's Secret "my-ca"/);
  });

  it('without an operator to answer, the request is left on the cluster and ctl times out naming what it waited for', async () => {
    await createCluster('idle');
    const result = await runCtl(['rotate-certificates', ...viaApi('idle'), '--timeout', '2']);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^requested new certificates: keelson.io\/rotate-certificates=ctl-/);
    assert.equal(result.stderr, 'keelson ctl: timed out waiting for the operator to re-issue idle-server-tls (is the operator running?)\n');
    const annotations = (
      await api.custom.getNamespacedCustomObject({ group: 'keelson.io', version: 'v1', namespace: ns, plural: 'databaseclusters', name: 'idle' })
    ).metadata?.annotations;
    assert.match(annotations?.['keelson.io/rotate-certificates'] ?? '', /^ctl-\d{4}-/);
    const bad = await runCtl(['rotate-certificates', ...viaApi('idle'), '--timeout', 'soon']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--timeout must be a positive number of seconds/);
  });

  describe('the handshake members are checked with', () => {
    let tlsPostgres: TestPostgres;
    let plainPostgres: TestPostgres;
    before(async () => {
      tlsPostgres = await startTlsPostgres(createCertificateAuthority('rotate-ctl'));
      plainPostgres = await startPostgres();
    });
    after(async () => {
      await tlsPostgres?.stop();
      await plainPostgres?.stop();
    });

    it('reads the certificate PostgreSQL serves to a new client; a server without TLS is named', async () => {
      const served = await servedCertificate(undefined, '127.0.0.1', tlsPostgres.port, 10_000);
      assert.equal(served.fingerprint256, new X509Certificate(readFileSync(join(tlsPostgres.dataDir, 'server.crt'))).fingerprint256);
      await assert.rejects(servedCertificate(undefined, '127.0.0.1', plainPostgres.port, 10_000), /127\.0\.0\.1:\d+ does not offer TLS \(answered "N"/);
    });
  });
});
