import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import type { V1Secret } from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { createCertificateAuthority, pemCertificates } from '../../../lib/tls-certificates.js';
import { certificatesCondition, ensureCertificates, reportCertificateProblems } from '../../../operator/certificates/ensure.js';
import { buildCredentialSecret } from '../../../operator/builders/secrets.js';
import { EventRecorder } from '../../../operator/events.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { startCrdApiServer, type CrdApiServer } from '../crd-api-server.js';

/** The operator's certificate step against the stand-in's API server: issue, serve TLS, refuse bad Secrets, rotate on request. */
describe('cluster certificates: issued into Secrets, bad user Secrets refused by field', { timeout: 60_000 }, () => {
  let stand: CrdApiServer;
  let api: OperatorKubeApi;
  const logger = createLogger({ name: 'certificates', level: 'silent' });
  const ns = 'default';
  const decode = (secret: V1Secret, key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
  const read = (name: string) => api.core.readNamespacedSecret({ namespace: ns, name });
  const events = async (reason: string) =>
    (await api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === reason).map((e) => e.message ?? '');

  before(async () => {
    stand = await startCrdApiServer(logger, ns);
    api = stand.api;
  });
  after(async () => {
    await stand?.close();
  });
  const createCluster = (name: string, extra?: Record<string, unknown>) => stand.createCluster(name, extra);

  it('issues a server certificate a verify-full client accepts by Service name, and a replication client certificate', async () => {
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined };
    const ctx = { cluster: await createCluster('shop'), operatorVersion: '1.0.0' };
    const verdict = await ensureCertificates(deps, ctx);
    assert.equal(verdict.status, 'True');
    const ca = await read('shop-ca');
    const tlsSecret = await read('shop-server-tls');
    assert.equal(tlsSecret.type, 'kubernetes.io/tls');
    assert.equal(decode(tlsSecret, 'ca.crt'), decode(ca, 'ca.crt'));
    assert.equal(decode(tlsSecret, 'client-ca.crt'), decode(ca, 'ca.crt'));
    assert.equal(tlsSecret.data?.['ca.key'], undefined, 'the CA key stays in the CA Secret');
    const replication = await read('shop-replication-tls');
    assert.equal(decode(replication, 'ca.crt'), decode(ca, 'ca.crt'));

    // A real TLS handshake with the issued material: the server certificate, a client verifying by Service name.
    const tlsServer = createServer(
      {
        cert: decode(tlsSecret, 'tls.crt'),
        key: decode(tlsSecret, 'tls.key'),
        ca: decode(tlsSecret, 'client-ca.crt'),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (socket) => socket.end('hello'),
    );
    tlsServer.listen(0, '127.0.0.1');
    await once(tlsServer, 'listening');
    const port = (tlsServer.address() as AddressInfo).port;
    const handshake = (servername: string, ca: string, client = { cert: decode(replication, 'tls.crt'), key: decode(replication, 'tls.key') }) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, servername, ca, ...client }, () => socket.once('data', (d) => resolve(d.toString())));
        socket.once('error', reject);
      });
    try {
      for (const name of ['shop-rw', 'shop-ro.default', 'shop-r.default.svc', 'shop-pooler-rw.default.svc.cluster.local', 'shop-1.shop-headless.default.svc']) {
        assert.equal(await handshake(name, decode(ca, 'ca.crt')), 'hello', name);
      }
      await assert.rejects(handshake('elsewhere.example', decode(ca, 'ca.crt')), /Hostname\/IP does not match/);
      await assert.rejects(handshake('shop-rw', createCertificateAuthority('another').cert), /self[- ]signed|unable to (get|verify)/i);
    } finally {
      tlsServer.close();
    }

    const again = await ensureCertificates(deps, ctx);
    assert.equal(again.status, 'True');
    assert.equal((await read('shop-server-tls')).metadata?.resourceVersion, tlsSecret.metadata?.resourceVersion, 'nothing rewritten');
    assert.deepEqual((await events('CertificateIssued')).sort(), [
      'issued the replication client certificate (the first one)',
      'issued the server certificate (the first one)',
    ]);
  });

  it('the app and superuser Secrets gain the CA and verify-full connection strings; their passwords stay', async () => {
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined };
    const ctx = { cluster: await createCluster('conn'), operatorVersion: '1.0.0' };
    await api.create(buildCredentialSecret(ctx, 'app', 'p@ss/w:rd'));
    await api.create(buildCredentialSecret(ctx, 'superuser', 'secret'));
    await ensureCertificates(deps, ctx);
    const app = await read('conn-app');
    assert.equal(decode(app, 'password'), 'p@ss/w:rd');
    assert.equal(decode(app, 'ca.crt'), decode(await read('conn-ca'), 'ca.crt'));
    assert.equal(decode(app, 'host'), 'conn-rw.default.svc');
    assert.equal(decode(app, 'uri'), 'postgresql://app:p%40ss%2Fw%3Ard@conn-rw.default.svc:5432/app?sslmode=verify-full');
    assert.equal(new URL(decode(app, 'uri')).password, encodeURIComponent('p@ss/w:rd'));
    assert.match(
      decode(await read('conn-superuser'), 'jdbc-uri'),
      /^jdbc:postgresql:\/\/conn-rw\.default\.svc:5432\/postgres\?user=postgres&password=secret&sslmode=verify-full$/,
    );
    const version = app.metadata?.resourceVersion;
    await ensureCertificates(deps, ctx);
    assert.equal((await read('conn-app')).metadata?.resourceVersion, version, 'nothing rewritten');
  });

  it('re-issues both certificates once for each new value of the rotate annotation', async () => {
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined };
    const cluster = await createCluster('rot');
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    const before = decode(await read('rot-server-tls'), 'tls.crt');
    cluster.metadata.annotations = { 'keelson.io/rotate-certificates': '2026-01-01T00:00:00Z' };
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    const rotated = await read('rot-server-tls');
    assert.notEqual(decode(rotated, 'tls.crt'), before);
    assert.equal(rotated.metadata?.annotations?.['keelson.io/rotate-certificates'], '2026-01-01T00:00:00Z');
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    assert.equal((await read('rot-server-tls')).metadata?.resourceVersion, rotated.metadata?.resourceVersion);
  });

  it('a new value of the rotate-ca annotation stages a new CA, switches after the propagation time, and is honoured once', async () => {
    let now = new Date();
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined, now: () => now };
    const cluster = await createCluster('rotca');
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    const oldCa = decode(await read('rotca-ca'), 'ca.crt');
    const oldServer = decode(await read('rotca-server-tls'), 'tls.crt');
    cluster.metadata.annotations = { 'keelson.io/rotate-ca': 'ctl-1' };
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    const staged = await read('rotca-ca');
    const nextCa = decode(staged, 'next.crt');
    assert.ok(nextCa, 'a new CA is staged');
    assert.equal(staged.metadata?.annotations?.['keelson.io/rotate-ca'], 'ctl-1');
    assert.deepEqual(pemCertificates(decode(await read('rotca-server-tls'), 'ca.crt')), [...pemCertificates(oldCa), ...pemCertificates(nextCa)]);
    assert.equal(decode(await read('rotca-server-tls'), 'tls.crt'), oldServer, 'the old CA still signs while the new one is only trusted');
    assert.ok((await events('ClusterCaStaged')).some((m) => m.startsWith('a rotation of the cluster CA was requested')));

    now = new Date(now.getTime() + 4 * 60_000);
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    const switched = await read('rotca-ca');
    assert.equal(pemCertificates(decode(switched, 'ca.crt'))[0], pemCertificates(nextCa)[0], 'the new CA signs');
    const server = await read('rotca-server-tls');
    assert.ok(
      new X509Certificate(decode(server, 'tls.crt')).verify(new X509Certificate(nextCa).publicKey),
      'the server certificate is re-issued by the new CA',
    );
    assert.deepEqual(pemCertificates(decode(server, 'ca.crt')), [...pemCertificates(nextCa), ...pemCertificates(oldCa)], 'the old CA stays trusted');

    now = new Date(now.getTime() + 10 * 60_000);
    await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    assert.equal((await read('rotca-ca')).metadata?.resourceVersion, switched.metadata?.resourceVersion, 'the request is honoured once');
  });

  it('a missing, malformed or mismatched user Secret is a False condition and one Event naming the field; pods keep the last good copy', async () => {
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined };
    const userCa = createCertificateAuthority('user-ca');
    const caData = { 'ca.crt': Buffer.from(userCa.cert).toString('base64'), 'ca.key': Buffer.from(userCa.key).toString('base64') };
    await api.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'user-ca' }, data: caData } });
    let cluster = await createCluster('byo', { certificates: { serverCASecret: 'user-ca', clientCASecret: 'user-ca' } });
    const good = await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    assert.equal(good.status, 'True');
    await assert.rejects(read('byo-ca'), 'no operator CA when the user brings both');
    const stored = await read('byo-server-tls');
    assert.equal(decode(stored, 'ca.crt'), userCa.cert);

    cluster = {
      ...cluster,
      spec: { ...cluster.spec, certificates: { serverCASecret: 'user-ca', clientCASecret: 'user-ca', replicationTLSSecret: 'no-such-secret' } },
    };
    const missing = await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    assert.equal(missing.status, 'False');
    assert.equal(missing.message, 'spec.certificates.replicationTLSSecret: Secret "no-such-secret" not found');
    const condition = certificatesCondition(missing, undefined, 2, new Date());
    assert.equal(condition.type, 'CertificatesReady');
    await reportCertificateProblems(deps, { cluster, operatorVersion: '1.0.0' }, missing, undefined);
    await reportCertificateProblems(deps, { cluster, operatorVersion: '1.0.0' }, missing, condition);
    assert.deepEqual(await events('CertificateRefused'), [missing.message], 'one Event while the problem lasts');

    await api.core.replaceNamespacedSecret({
      namespace: ns,
      name: 'user-ca',
      body: { metadata: { name: 'user-ca' }, data: { ...caData, 'ca.crt': Buffer.from('not a certificate').toString('base64') } },
    });
    const malformed = await ensureCertificates(deps, { cluster, operatorVersion: '1.0.0' });
    assert.match(malformed.message, /spec\.certificates\.serverCASecret: Secret "user-ca": ca\.crt holds no PEM certificate/);
    assert.equal((await read('byo-server-tls')).metadata?.resourceVersion, stored.metadata?.resourceVersion, 'the last good copy stays');
  });
});
