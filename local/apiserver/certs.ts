/** A throwaway CA and a server certificate for 127.0.0.1/localhost, plus a client certificate. */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface CertificateBundle {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

function keyPair(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
  // Node's native RSA generation is much faster than forge's pure-JS one.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) as forge.pki.rsa.PublicKey, pem: privateKey };
}

function certificate(options: {
  subject: forge.pki.CertificateField[];
  issuer: forge.pki.CertificateField[];
  publicKey: forge.pki.PublicKey;
  signingKey: forge.pki.rsa.PrivateKey;
  extensions: unknown[];
}): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = options.publicKey;
  cert.serialNumber = '01' + randomBytes(15).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000);
  cert.setSubject(options.subject);
  cert.setIssuer(options.issuer);
  cert.setExtensions(options.extensions);
  cert.sign(options.signingKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** Generates a CA, a server certificate for the given host names/IPs, and a client certificate (CN = user). */
export function generateCertificates(hosts: string[], clientUser = 'keelson-admin'): CertificateBundle {
  const ca = keyPair();
  const caName = [{ name: 'commonName', value: 'keelson-local-ca' }];
  const caCert = certificate({
    subject: caName,
    issuer: caName,
    publicKey: ca.publicKey,
    signingKey: ca.privateKey,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = keyPair();
  const altNames = hosts.map((h) => (/^[\d.]+$/.test(h) || h.includes(':') ? { type: 7, ip: h } : { type: 2, value: h }));
  const serverCert = certificate({
    subject: [{ name: 'commonName', value: 'keelson-apiserver' }],
    issuer: caName,
    publicKey: server.publicKey,
    signingKey: ca.privateKey,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  const client = keyPair();
  const clientCert = certificate({
    subject: [{ name: 'commonName', value: clientUser }, { name: 'organizationName', value: 'system:masters' }],
    issuer: caName,
    publicKey: client.publicKey,
    signingKey: ca.privateKey,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { caCert, serverCert, serverKey: server.pem, clientCert, clientKey: client.pem };
}
