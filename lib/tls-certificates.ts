/**
 * X.509 certificates signed with Node's crypto, no tool run: private CAs and the certificates they
 * issue, for the local stand-in's API server and for pgBackRest's TLS server between the members
 * of one cluster. New keys are ECDSA P-256 (milliseconds; RSA took seconds on a shared machine);
 * a CA brought as PEM may hold an EC or RSA key. Keys exist only in memory and in the PEM returned.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString,
  boolean,
  explicit,
  implicitPrimitive,
  integer,
  objectIdentifier,
  octetString,
  readElements,
  sequence,
  set,
  time,
  tlv,
  utf8String,
} from './der.js';

export interface PemPair {
  cert: string;
  key: string;
}

const oids = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
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

const dayMs = 24 * 3600_000;

/** Printable, one line, within X.509's upper bound for a common name. */
const commonNamePattern = /^[\x21-\x7e][\x20-\x7e]{0,63}$/;

/** What signs: the issuer's name as encoded in its certificate, its key and key identifier, its end of validity. */
interface Signer {
  name: Buffer;
  privateKey: KeyObject;
  keyId?: Buffer;
  notAfter: Date;
}

export type CertificateUsage = 'server' | 'client' | 'server-and-client';

export interface IssueOptions {
  /** Days of validity (never past the CA's own end). */
  days?: number;
  usage?: CertificateUsage;
  /** subjectAltName entries (host names, IP addresses); none by default: see issueCertificate. */
  hosts?: string[];
  organization?: string;
}

function checkName(commonName: string): void {
  if (!commonNamePattern.test(commonName)) throw new Error(`certificate name "${commonName.slice(0, 80)}" must be 1-64 printable ASCII characters`);
}

function distinguishedName(commonName: string, organization?: string): Buffer {
  const rdns = [set(sequence(objectIdentifier(oids.commonName), utf8String(commonName)))];
  if (organization) rdns.push(set(sequence(objectIdentifier(oids.organization), utf8String(organization))));
  return sequence(...rdns);
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
}

function signatureAlgorithm(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === 'ec') return sequence(objectIdentifier(oids.ecdsaWithSha256));
  if (key.asymmetricKeyType === 'rsa') return sequence(objectIdentifier(oids.sha256WithRsa), tlv(0x05, Buffer.alloc(0)));
  throw new Error(`a CA key of type ${String(key.asymmetricKeyType)} cannot sign here (EC or RSA)`);
}

const toPem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim()}\n-----END ${label}-----\n`;
const keyPem = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();

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
  return [...a, ...Array<string>(8 - a.length - b.length).fill('0'), ...b].join(':');
}

/** Signs one certificate for `subject` (its name and public key) with `issuer`. */
function signCertificate(subjectName: Buffer, subjectKey: KeyObject, issuer: Signer, notAfter: Date, extensions: Buffer[]): string {
  const algorithm = signatureAlgorithm(issuer.privateKey);
  const spki = subjectKey.export({ type: 'spki', format: 'der' });
  const keyIds = [extension(oids.subjectKeyId, false, octetString(createHash('sha1').update(spki).digest()))];
  if (issuer.keyId) keyIds.push(extension(oids.authorityKeyId, false, sequence(implicitPrimitive(0, issuer.keyId))));
  const tbs = sequence(
    explicit(0, integer(2)),
    integer(Buffer.concat([Buffer.from([0x01]), randomBytes(15)])),
    algorithm,
    issuer.name,
    sequence(time(new Date(Date.now() - 60_000)), time(notAfter)),
    subjectName,
    spki,
    explicit(3, sequence(...extensions, ...keyIds)),
  );
  return toPem('CERTIFICATE', sequence(tbs, algorithm, bitString(sign('sha256', tbs, issuer.privateKey))));
}

/** A self-signed CA with a new EC P-256 key. */
export function createCertificateAuthority(commonName: string, days = 3650): PemPair {
  checkName(commonName);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = distinguishedName(commonName);
  const keyId = createHash('sha1')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest();
  const cert = signCertificate(
    name,
    publicKey,
    { name, privateKey, keyId, notAfter: new Date(Date.now() + days * dayMs) },
    new Date(Date.now() + days * dayMs),
    [
      extension(oids.basicConstraints, true, sequence(boolean(true))),
      // digitalSignature, keyCertSign, cRLSign
      extension(oids.keyUsage, true, bitString(Buffer.from([0x86]), 1)),
    ],
  );
  return { cert, key: keyPem(privateKey) };
}

/** The PEM certificates in a file's text, in order (a CA bundle holds several). */
export function pemCertificates(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
}

/** When a PEM certificate stops being valid. */
export function certificateNotAfter(pem: string): Date {
  return new Date(new X509Certificate(pem).validTo);
}

/** When a PEM certificate starts and stops being valid. */
export function certificateValidity(pem: string): { notBefore: Date; notAfter: Date } {
  const x509 = new X509Certificate(pem);
  return { notBefore: new Date(x509.validFrom), notAfter: new Date(x509.validTo) };
}

/** The DNS names and IP addresses of a certificate's subjectAltName, in order. */
export function certificateHosts(pem: string): string[] {
  return (new X509Certificate(pem).subjectAltName ?? '')
    .split(', ')
    .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry)?.[1])
    .filter((host): host is string => !!host);
}

/** The signer in a CA's PEM pair: the FIRST certificate of `ca.cert`, which must match `ca.key`. */
function signerFromPem(ca: PemPair): Signer {
  const first = pemCertificates(ca.cert)[0];
  if (!first) throw new Error('the CA certificate holds no PEM certificate');
  const x509 = new X509Certificate(first);
  const privateKey = createPrivateKey(ca.key);
  if (!x509.checkPrivateKey(privateKey)) throw new Error('the CA key does not belong to the (first) CA certificate');
  if (!x509.ca) throw new Error('the CA certificate is not a CA (basicConstraints CA:FALSE)');
  const [certificate] = readElements(x509.raw);
  const [tbs] = readElements(certificate!.content);
  const fields = readElements(tbs!.content);
  // version [0] is optional; then serial, signature, issuer, validity, subject.
  const subject = fields[fields[0]!.tag === 0xa0 ? 5 : 4]!;
  return { name: subject.encoded, privateKey, keyId: subjectKeyId(fields), notAfter: new Date(x509.validTo) };
}

/** The subjectKeyIdentifier extension's value, if the certificate has one. */
function subjectKeyId(tbsFields: { tag: number; content: Buffer }[]): Buffer | undefined {
  const extensions = tbsFields.find((f) => f.tag === 0xa3);
  if (!extensions) return undefined;
  const wanted = objectIdentifier(oids.subjectKeyId);
  for (const ext of readElements(readElements(extensions.content)[0]!.content)) {
    const parts = readElements(ext.content);
    if (parts[0]!.encoded.equals(wanted)) return readElements(parts.at(-1)!.content)[0]!.content;
  }
  return undefined;
}

const usageOids: Record<CertificateUsage, string[]> = {
  server: [oids.serverAuth],
  client: [oids.clientAuth],
  'server-and-client': [oids.serverAuth, oids.clientAuth],
};

/**
 * A certificate for `commonName` with a new EC key, signed by `ca` (PEM; the first certificate
 * signs). By default usable by a TLS server and client and without subjectAltName: pgBackRest
 * 2.45 checks an IP address only against the common name (it ignores IP subjectAltNames, and
 * ignores the common name whenever any subjectAltName exists).
 */
export function issueCertificate(ca: PemPair, commonName: string, options: IssueOptions = {}): PemPair {
  checkName(commonName);
  const issuer = signerFromPem(ca);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const wanted = new Date(Date.now() + (options.days ?? 825) * dayMs);
  const notAfter = wanted > issuer.notAfter ? issuer.notAfter : wanted;
  const usage = options.usage ?? 'server-and-client';
  const extensions = [
    extension(oids.basicConstraints, true, sequence()),
    // digitalSignature (and keyEncipherment, for RSA key exchange)
    extension(oids.keyUsage, true, bitString(Buffer.from([0xa0]), 5)),
    extension(oids.extKeyUsage, false, sequence(...usageOids[usage].map((oid) => objectIdentifier(oid)))),
  ];
  if (options.hosts?.length) extensions.push(extension(oids.subjectAltName, false, subjectAltNames(options.hosts)));
  return { cert: signCertificate(distinguishedName(commonName, options.organization), publicKey, issuer, notAfter, extensions), key: keyPem(privateKey) };
}
