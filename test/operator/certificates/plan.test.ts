import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import { certificateHosts, certificateValidity, createCertificateAuthority, issueCertificate } from '../../../lib/tls-certificates.js';
import { planCertificates, type CertificateInputs } from '../../../operator/certificates/plan.js';
import { renewalTime } from '../../../operator/certificates/renewal.js';
import { serverCertificateHosts } from '../../../operator/certificates/server-names.js';

const run = promisify(execFile);
const dayMs = 24 * 3600_000;
const secret = (data: Record<string, string>): V1Secret => ({
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});
const operatorCa = createCertificateAuthority('shop.default.keelson.io');
const base = (over: Partial<CertificateInputs> = {}): CertificateInputs => ({
  clusterName: 'shop',
  namespace: 'default',
  replicationRole: 'replicator',
  spec: {},
  operatorCa,
  userSecrets: {},
  stored: {},
  now: new Date(),
  ...over,
});

test('the server certificate names every Service in every form and the pods under the headless Service', () => {
  const hosts = serverCertificateHosts('shop', 'ns1');
  for (const service of ['shop-rw', 'shop-ro', 'shop-r', 'shop-pooler-rw', 'shop-pooler-ro']) {
    for (const host of [service, `${service}.ns1`, `${service}.ns1.svc`, `${service}.ns1.svc.cluster.local`]) assert.ok(hosts.includes(host), host);
  }
  assert.ok(hosts.includes('*.shop-headless.ns1.svc.cluster.local'));
});

test('a new cluster gets a server and a replication certificate from the operator CA, verified by openssl', async () => {
  const plan = planCertificates(base());
  assert.deepEqual(plan.problems, []);
  assert.equal(plan.issued.length, 2);
  const server = plan.server!;
  const replication = plan.replication!;
  assert.equal(server.trust, operatorCa.cert);
  assert.equal(server.clientTrust, operatorCa.cert);
  assert.deepEqual(certificateHosts(server.pair.cert), serverCertificateHosts('shop', 'default'));
  const { notBefore, notAfter } = certificateValidity(server.pair.cert);
  assert.ok(Math.abs(notAfter.getTime() - notBefore.getTime() - 90 * dayMs) < 5 * 60_000, 'ninety days');
  const dir = await mkdtemp(join(tmpdir(), 'plan-'));
  try {
    await writeFile(join(dir, 'ca.crt'), operatorCa.cert);
    await writeFile(join(dir, 'server.crt'), server.pair.cert);
    await writeFile(join(dir, 'client.crt'), replication.pair.cert);
    await run('openssl', ['verify', '-CAfile', join(dir, 'ca.crt'), '-purpose', 'sslserver', join(dir, 'server.crt')]);
    await run('openssl', ['verify', '-CAfile', join(dir, 'ca.crt'), '-purpose', 'sslclient', join(dir, 'client.crt')]);
    const host = await run('openssl', ['x509', '-in', join(dir, 'server.crt'), '-noout', '-checkhost', 'shop-0.shop-headless.default.svc']);
    assert.match(host.stdout, /does match certificate/);
    const subject = await run('openssl', ['x509', '-in', join(dir, 'client.crt'), '-noout', '-subject']);
    assert.match(subject.stdout, /CN\s*=\s*replicator/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('stored certificates stay until two thirds of their life, then are re-issued; a rotation request re-issues at once', () => {
  const first = planCertificates(base());
  const stored = { server: first.server!, replication: first.replication! };
  assert.deepEqual(planCertificates(base({ stored })), { problems: [], issued: [] }, 'nothing to write');
  const due = renewalTime(stored.server.pair.cert);
  assert.ok(Math.abs(due.getTime() - certificateValidity(stored.server.pair.cert).notBefore.getTime() - 60 * dayMs) < 5 * 60_000);
  const later = planCertificates(base({ stored, now: new Date(due.getTime() + 1000) }));
  assert.equal(later.issued.length, 2);
  assert.match(later.issued[0]!, /two thirds of its life passed/);
  assert.notEqual(later.server!.pair.cert, stored.server.pair.cert);

  const requested = planCertificates(base({ stored, rotationRequest: 'now-1' }));
  assert.match(requested.issued.join(), /rotation requested \(now-1\)/);
  assert.equal(requested.server!.issuedFor, 'now-1');
  const afterRequest = { server: requested.server!, replication: requested.replication! };
  assert.deepEqual(planCertificates(base({ stored: afterRequest, rotationRequest: 'now-1' })).issued, [], 'the same request is honoured once');
});

test('a CA in staging joins the trust bundles; after the switch the new CA signs new certificates', () => {
  const first = planCertificates(base());
  const stored = { server: first.server!, replication: first.replication! };
  const next = createCertificateAuthority('shop.default.keelson.io');
  const staged = planCertificates(
    base({ stored, operatorCa: { cert: operatorCa.cert + next.cert, key: operatorCa.key, nextCert: next.cert, nextKey: next.key } }),
  );
  assert.deepEqual(staged.issued, [], 'the current CA still signs');
  assert.equal(staged.server!.pair, stored.server.pair);
  assert.equal(staged.server!.trust, operatorCa.cert + next.cert);
  const stagedStore = { server: staged.server!, replication: staged.replication! };
  const switched = planCertificates(base({ stored: stagedStore, operatorCa: { cert: next.cert + operatorCa.cert, key: next.key } }));
  assert.match(switched.issued.join(), /another CA signs now/);
  assert.equal(switched.server!.trust, next.cert + operatorCa.cert);
});

test("the user's Secrets are checked and copied; a broken one keeps the stored copy and names its field", () => {
  const userCa = createCertificateAuthority('user-ca');
  const userServer = issueCertificate(userCa, 'db.example.com', { usage: 'server', hosts: ['db.example.com'] });
  const spec = { serverCASecret: 'my-ca', serverTLSSecret: 'my-server' };
  const good = planCertificates(
    base({
      spec,
      userSecrets: { serverCASecret: secret({ 'ca.crt': userCa.cert }), serverTLSSecret: secret({ 'tls.crt': userServer.cert, 'tls.key': userServer.key }) },
    }),
  );
  assert.deepEqual(good.problems, []);
  assert.equal(good.server!.pair.cert, userServer.cert);
  assert.equal(good.server!.trust, userCa.cert);
  assert.equal(good.server!.clientTrust, operatorCa.cert, "the client CA is still the operator's");
  assert.equal(good.server!.issuedFor, undefined);

  const stored = { server: good.server!, replication: good.replication! };
  const stranger = issueCertificate(createCertificateAuthority('stranger'), 'db', { usage: 'server' });
  const broken = planCertificates(
    base({
      spec,
      stored,
      userSecrets: { serverCASecret: secret({ 'ca.crt': userCa.cert }), serverTLSSecret: secret({ 'tls.crt': stranger.cert, 'tls.key': userServer.key }) },
    }),
  );
  assert.equal(broken.server, undefined, 'the stored copy stays');
  assert.deepEqual(
    broken.problems.map((p) => p.field),
    ['serverTLSSecret'],
  );
  assert.match(broken.problems[0]!.message, /^spec\.certificates\.serverTLSSecret: Secret "my-server": tls\.key does not match tls\.crt$/);

  const missing = planCertificates(base({ spec: { clientCASecret: 'gone' }, stored }));
  assert.deepEqual(missing.problems, [{ field: 'clientCASecret', message: 'spec.certificates.clientCASecret: Secret "gone" not found' }]);
  assert.equal(missing.replication, undefined);
});
