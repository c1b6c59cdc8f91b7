import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import { certificateNotAfter, createCertificateAuthority, issueCertificate, pemCertificates } from '../../lib/tls-certificates.js';

test('a CA signs a CN-only member certificate that verifies against it', () => {
  const ca = createCertificateAuthority('demo.ns.backup.keelson.io');
  const caCert = new X509Certificate(ca.cert);
  assert.equal(caCert.ca, true);
  assert.equal(caCert.subject, 'CN=demo.ns.backup.keelson.io');
  const member = issueCertificate(ca, '10.1.2.3');
  const cert = new X509Certificate(member.cert);
  assert.equal(cert.subject, 'CN=10.1.2.3');
  assert.equal(cert.issuer, caCert.subject);
  assert.equal(cert.ca, false);
  assert.equal(cert.subjectAltName, undefined, 'pgBackRest ignores the CN of a certificate with any subjectAltName');
  assert.ok(cert.verify(caCert.publicKey));
  assert.ok(cert.checkIssued(caCert));
  assert.deepEqual(cert.keyUsage?.sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
});

test('a member certificate never outlives its CA, and the first certificate of a bundle signs', () => {
  const ca = createCertificateAuthority('short-ca', 10);
  const older = createCertificateAuthority('older-ca');
  const member = issueCertificate({ cert: ca.cert + older.cert, key: ca.key }, 'keelson-backup', { days: 825 });
  assert.equal(pemCertificates(ca.cert + older.cert).length, 2);
  assert.ok(certificateNotAfter(member.cert) <= certificateNotAfter(ca.cert));
  assert.ok(new X509Certificate(member.cert).checkIssued(new X509Certificate(ca.cert)));
  assert.throws(() => issueCertificate({ cert: older.cert + ca.cert, key: ca.key }, 'x'), /does not belong to the \(first\) CA certificate/);
});

test('refusals name the problem: not a CA, no certificate, a bad name', () => {
  const ca = createCertificateAuthority('ca');
  const leaf = issueCertificate(ca, 'leaf');
  assert.throws(() => issueCertificate(leaf, 'x'), /is not a CA/);
  assert.throws(() => issueCertificate({ cert: 'nothing', key: ca.key }, 'x'), /holds no PEM certificate/);
  assert.throws(() => issueCertificate(ca, 'bad\nname'), /printable ASCII/);
  assert.throws(() => createCertificateAuthority(''), /printable ASCII/);
});

test('mutual TLS between a server and a client certificate issued from one CA', async () => {
  const ca = createCertificateAuthority('mtls-ca');
  const server = issueCertificate(ca, '127.0.0.1', { usage: 'server', hosts: ['127.0.0.1', 'localhost'] });
  const client = issueCertificate(ca, 'keelson-backup', { usage: 'client' });
  const listener = createServer({ cert: server.cert, key: server.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (socket) => {
    socket.end(`hello ${socket.getPeerCertificate().subject.CN}`);
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  try {
    const socket = connect({ host: '127.0.0.1', port: (listener.address() as AddressInfo).port, ca: ca.cert, cert: client.cert, key: client.key });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    await once(socket, 'end');
    assert.equal(text, 'hello keelson-backup');
    // A certificate from another CA is refused by the server.
    const stranger = issueCertificate(createCertificateAuthority('other-ca'), 'keelson-backup', { usage: 'client' });
    const refused = connect({ host: '127.0.0.1', port: (listener.address() as AddressInfo).port, ca: ca.cert, cert: stranger.cert, key: stranger.key });
    const outcome = await new Promise<string>((resolve) => {
      refused.on('error', (error) => resolve(error.message));
      refused.on('data', () => resolve('accepted'));
      refused.on('end', () => resolve('ended'));
    });
    assert.notEqual(outcome, 'accepted');
    refused.destroy();
  } finally {
    listener.close();
  }
});
