/**
 * A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate, all
 * ECDSA P-256 and signed with Node's crypto. Keys take milliseconds (RSA took seconds on the
 * shared machine, and every test starts a server).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { bitString, boolean, explicit, implicitPrimitive, integer, objectIdentifier, octetString, sequence, set, time, utf8String } from './der.js';

export interface CertificateBundle {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Issues another client certificate from the same CA (the CN is the client's identity). */
  issueClient(commonName: string, organization?: string): { cert: string; key: string };
}

const oids = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

interface Party {
  name: Buffer;
  key: { privateKey: KeyObject; publicKey: KeyObject };
  keyId: Buffer;
}

function distinguishedName(commonName: string, organization?: string): Buffer {
  const rdns = [set(sequence(objectIdentifier(oids.commonName), utf8String(commonName)))];
  if (organization) rdns.push(set(sequence(objectIdentifier(oids.organization), utf8String(organization))));
  return sequence(...rdns);
}

function party(commonName: string, organization?: string): Party {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = key.publicKey.export({ type: 'spki', format: 'der' });
  return { name: distinguishedName(commonName, organization), key, keyId: createHash('sha1').update(spki).digest() };
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
}

function issue(subject: Party, issuer: Party, extensions: Buffer[]): string {
  const algorithm = sequence(objectIdentifier(oids.ecdsaWithSha256));
  const tbs = sequence(
    explicit(0, integer(2)),
    integer(Buffer.concat([Buffer.from([0x01]), randomBytes(15)])),
    algorithm,
    issuer.name,
    sequence(time(new Date(Date.now() - 60_000)), time(new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000))),
    subject.name,
    subject.key.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      sequence(
        ...extensions,
        extension(oids.subjectKeyId, false, octetString(subject.keyId)),
        extension(oids.authorityKeyId, false, sequence(implicitPrimitive(0, issuer.keyId))),
      ),
    ),
  );
  const signature = sign('sha256', tbs, issuer.key.privateKey);
  const der = sequence(tbs, algorithm, bitString(signature));
  const base64 = der.toString('base64').replace(/(.{64})/g, '$1\n').trim();
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}

function subjectAltNames(hosts: string[]): Buffer {
  return sequence(
    ...hosts.map((h) => {
      if (isIP(h) === 4) return implicitPrimitive(7, Buffer.from(h.split('.').map(Number)));
      if (isIP(h) === 6) {
        const full = h.includes('::') ? expandIpv6(h) : h;
        return implicitPrimitive(7, Buffer.from(full.split(':').flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff])));
      }
      return implicitPrimitive(2, Buffer.from(h, 'ascii'));
    }),
  );
}

function expandIpv6(h: string): string {
  const [head, tail] = h.split('::');
  const a = head ? head.split(':') : [];
  const b = tail ? tail.split(':') : [];
  return [...a, ...Array(8 - a.length - b.length).fill('0'), ...b].join(':');
}

const pem = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();

/** Generates a CA, a server certificate for the given host names/IPs, and a client certificate (CN = user). */
export function generateCertificates(hosts: string[], clientUser = 'keelson-admin'): CertificateBundle {
  const ca = party('keelson-local-ca');
  const caCert = issue(ca, ca, [
    extension(oids.basicConstraints, true, sequence(boolean(true))),
    // keyCertSign + cRLSign + digitalSignature
    extension(oids.keyUsage, true, bitString(Buffer.from([0x86]), 1)),
  ]);
  const server = party('keelson-apiserver');
  const serverCert = issue(server, ca, [
    extension(oids.basicConstraints, true, sequence()),
    extension(oids.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
    extension(oids.extKeyUsage, false, sequence(objectIdentifier(oids.serverAuth))),
    extension(oids.subjectAltName, false, subjectAltNames(hosts)),
  ]);
  const issueClient = (commonName: string, organization?: string): { cert: string; key: string } => {
    const client = party(commonName, organization);
    const cert = issue(client, ca, [
      extension(oids.basicConstraints, true, sequence()),
      extension(oids.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
      extension(oids.extKeyUsage, false, sequence(objectIdentifier(oids.clientAuth))),
    ]);
    return { cert, key: pem(client.key.privateKey) };
  };
  const admin = issueClient(clientUser, 'system:masters');
  return { caCert, serverCert, serverKey: pem(server.key.privateKey), clientCert: admin.cert, clientKey: admin.key, issueClient };
}
