import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import { createCertificateAuthority, issueCertificate } from '../../../lib/tls-certificates.js';
import { checkCaSecret, checkTlsSecret } from '../../../operator/certificates/secret-material.js';

const dayMs = 24 * 3600_000;
const now = new Date();
const secret = (data: Record<string, string>): V1Secret => ({
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});
const ca = createCertificateAuthority('user-ca');
const other = createCertificateAuthority('other-ca');
const leaf = issueCertificate(ca, 'replicator', { usage: 'client', days: 30 });
const expect = { trust: ca.cert, trustField: 'spec.certificates.clientCASecret', usage: 'client' as const, commonName: 'replicator' };

test('a good CA Secret and a good leaf Secret pass', () => {
  assert.deepEqual(checkCaSecret(secret({ 'ca.crt': ca.cert, 'ca.key': ca.key }), 'ca', true, now), { ok: true, value: { bundle: ca.cert, key: ca.key } });
  assert.deepEqual(checkCaSecret(secret({ 'ca.crt': ca.cert }), 'ca', false, now), { ok: true, value: { bundle: ca.cert } });
  assert.deepEqual(checkTlsSecret(secret({ 'tls.crt': leaf.cert, 'tls.key': leaf.key }), 'repl', expect, now), { ok: true, value: leaf });
});

test('every bad CA Secret is one sentence naming the Secret and the key', () => {
  const cases: [V1Secret | undefined, boolean, RegExp][] = [
    [undefined, false, /^Secret "ca" not found$/],
    [secret({ 'tls.crt': ca.cert }), false, /has no ca\.crt/],
    [secret({ 'ca.crt': 'garbage' }), false, /ca\.crt holds no PEM certificate/],
    [secret({ 'ca.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }), false, /ca\.crt is not a valid certificate/],
    [secret({ 'ca.crt': leaf.cert }), false, /ca\.crt is not a CA certificate/],
    [secret({ 'ca.crt': ca.cert }), true, /has no ca\.key \(the operator issues certificates with it\)/],
    [secret({ 'ca.crt': ca.cert, 'ca.key': 'not a key' }), true, /ca\.key is not a PEM private key/],
    [secret({ 'ca.crt': ca.cert, 'ca.key': other.key }), true, /ca\.key does not match ca\.crt/],
  ];
  for (const [input, needKey, message] of cases) {
    const result = checkCaSecret(input, 'ca', needKey, now);
    assert.equal(result.ok, false);
    assert.match((result as { problem: string }).problem, message);
  }
  const expired = checkCaSecret(secret({ 'ca.crt': ca.cert }), 'ca', false, new Date(now.getTime() + 3651 * dayMs));
  assert.match((expired as { problem: string }).problem, /^Secret "ca": ca\.crt expired on \d{4}-/);
});

test('every bad leaf Secret is one sentence naming the Secret and the key', () => {
  const stranger = issueCertificate(other, 'replicator', { usage: 'client' });
  const wrongName = issueCertificate(ca, 'postgres', { usage: 'client' });
  const serverOnly = issueCertificate(ca, 'replicator', { usage: 'server' });
  const cases: [V1Secret | undefined, RegExp][] = [
    [undefined, /^Secret "repl" not found$/],
    [secret({ 'tls.key': leaf.key }), /has no tls\.crt/],
    [secret({ 'tls.crt': leaf.cert }), /has no tls\.key/],
    [secret({ 'tls.crt': 'x', 'tls.key': leaf.key }), /tls\.crt holds no PEM certificate/],
    [secret({ 'tls.crt': leaf.cert, 'tls.key': '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }), /tls\.key is not a PEM private key/],
    [secret({ 'tls.crt': leaf.cert, 'tls.key': stranger.key }), /tls\.key does not match tls\.crt/],
    [secret({ 'tls.crt': stranger.cert, 'tls.key': stranger.key }), /tls\.crt is not signed by the CA of spec\.certificates\.clientCASecret/],
    [secret({ 'tls.crt': wrongName.cert, 'tls.key': wrongName.key }), /tls\.crt has common name "postgres", not "replicator"/],
    [secret({ 'tls.crt': serverOnly.cert, 'tls.key': serverOnly.key }), /tls\.crt is not a TLS client certificate \(extended key usage\)/],
  ];
  for (const [input, message] of cases) {
    const result = checkTlsSecret(input, 'repl', expect, now);
    assert.equal(result.ok, false);
    assert.match((result as { problem: string }).problem, message);
  }
  const expired = checkTlsSecret(secret({ 'tls.crt': leaf.cert, 'tls.key': leaf.key }), 'repl', expect, new Date(now.getTime() + 31 * dayMs));
  assert.match((expired as { problem: string }).problem, /^Secret "repl": tls\.crt expired on /);
});

test('tls.crt may carry more certificates after the leaf; any CA of the trust bundle vouches', () => {
  const withBundle = secret({ 'tls.crt': leaf.cert + other.cert, 'tls.key': leaf.key });
  assert.equal(checkTlsSecret(withBundle, 'repl', expect, now).ok, true);
  assert.equal(checkTlsSecret(withBundle, 'repl', { ...expect, trust: other.cert + ca.cert }, now).ok, true);
});
