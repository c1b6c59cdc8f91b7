import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { pemCertificates, type PemPair } from '../../lib/tls-certificates.js';
import { TlsKeys } from '../../api/naming.js';

/**
 * Reads and checks the PEM material of a TLS Secret in cert-manager's shape. Every problem is one
 * sentence a user can act on (which key, what is wrong with it); nothing here throws. Pure.
 */

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A CA from a Secret: the trust bundle (its first certificate is the CA) and the key when asked for. */
export interface CaMaterial {
  bundle: string;
  key?: string;
}

const problem = (text: string): { ok: false; problem: string } => ({ ok: false, problem: text });

/** A key's text, decoded (data) or as given (stringData, before the API server folds it in). */
export function secretText(secret: V1Secret, key: string): string | undefined {
  const data = secret.data?.[key];
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  return secret.stringData?.[key] || undefined;
}

function parseCertificates(text: string, key: string): Checked<X509Certificate[]> {
  const pems = pemCertificates(text);
  if (!pems.length) return problem(`${key} holds no PEM certificate`);
  try {
    return { ok: true, value: pems.map((pem) => new X509Certificate(pem)) };
  } catch (error) {
    return problem(`${key} is not a valid certificate (${(error as Error).message.slice(0, 120)})`);
  }
}

function parseKey(text: string, key: string): Checked<KeyObject> {
  try {
    return { ok: true, value: createPrivateKey(text) };
  } catch {
    return problem(`${key} is not a PEM private key`);
  }
}

function checkDates(cert: X509Certificate, key: string, now: Date): string | undefined {
  if (new Date(cert.validTo) <= now) return `${key} expired on ${new Date(cert.validTo).toISOString()}`;
  if (new Date(cert.validFrom) > now) return `${key} is not valid before ${new Date(cert.validFrom).toISOString()}`;
  return undefined;
}

export function commonNameOf(cert: X509Certificate): string | undefined {
  return /^CN=(.*)$/m.exec(cert.subject)?.[1];
}

/** ca.crt (a bundle whose first certificate is the CA) and, with `needKey`, the matching ca.key. */
export function checkCaSecret(secret: V1Secret | undefined, name: string, needKey: boolean, now: Date): Checked<CaMaterial> {
  if (!secret) return problem(`Secret "${name}" not found`);
  const text = secretText(secret, TlsKeys.ca);
  if (!text) return problem(`Secret "${name}" has no ${TlsKeys.ca}`);
  const certs = parseCertificates(text, TlsKeys.ca);
  if (!certs.ok) return problem(`Secret "${name}": ${certs.problem}`);
  const ca = certs.value[0]!;
  const dates = checkDates(ca, TlsKeys.ca, now);
  if (dates) return problem(`Secret "${name}": ${dates}`);
  if (!ca.ca) return problem(`Secret "${name}": ${TlsKeys.ca} is not a CA certificate (basicConstraints CA:FALSE)`);
  if (!needKey) return { ok: true, value: { bundle: text } };
  const keyText = secretText(secret, TlsKeys.caKey);
  if (!keyText) return problem(`Secret "${name}" has no ${TlsKeys.caKey} (the operator issues certificates with it)`);
  const key = parseKey(keyText, TlsKeys.caKey);
  if (!key.ok) return problem(`Secret "${name}": ${key.problem}`);
  if (!ca.checkPrivateKey(key.value)) return problem(`Secret "${name}": ${TlsKeys.caKey} does not match ${TlsKeys.ca}`);
  return { ok: true, value: { bundle: text, key: keyText } };
}

/** Whether `trust` (PEM bundle) vouches for `leaf`, through the intermediates that follow it. */
function chainsTo(leaf: X509Certificate, intermediates: X509Certificate[], trust: X509Certificate[]): boolean {
  let current = leaf;
  for (let depth = 0; depth < 5; depth += 1) {
    const issuedBy = (issuer: X509Certificate): boolean => current.checkIssued(issuer) && current.verify(issuer.publicKey);
    if (trust.some(issuedBy)) return true;
    const next = intermediates.find((candidate) => candidate !== current && issuedBy(candidate));
    if (!next) return false;
    current = next;
  }
  return false;
}

export interface LeafExpectations {
  /** The trust bundle (PEM) the certificate must chain to, and the field that names it. */
  trust: string;
  trustField: string;
  /** What it must be good for (its extended key usage, when it states one). */
  usage: 'server' | 'client';
  /** The common name it must have (a replication client certificate: the role). */
  commonName?: string;
}

const usageOids = { server: '1.3.6.1.5.5.7.3.1', client: '1.3.6.1.5.5.7.3.2' } as const;

/** tls.crt (the certificate, then any intermediates) and tls.key, signed by a CA of `expect.trust`. */
export function checkTlsSecret(secret: V1Secret | undefined, name: string, expect: LeafExpectations, now: Date): Checked<PemPair> {
  if (!secret) return problem(`Secret "${name}" not found`);
  const certText = secretText(secret, TlsKeys.cert);
  if (!certText) return problem(`Secret "${name}" has no ${TlsKeys.cert}`);
  const certs = parseCertificates(certText, TlsKeys.cert);
  if (!certs.ok) return problem(`Secret "${name}": ${certs.problem}`);
  const [leaf, ...intermediates] = certs.value;
  const dates = checkDates(leaf!, TlsKeys.cert, now);
  if (dates) return problem(`Secret "${name}": ${dates}`);
  const keyText = secretText(secret, TlsKeys.key);
  if (!keyText) return problem(`Secret "${name}" has no ${TlsKeys.key}`);
  const key = parseKey(keyText, TlsKeys.key);
  if (!key.ok) return problem(`Secret "${name}": ${key.problem}`);
  if (!leaf!.checkPrivateKey(key.value)) return problem(`Secret "${name}": ${TlsKeys.key} does not match ${TlsKeys.cert}`);
  const trust = pemCertificates(expect.trust).map((pem) => new X509Certificate(pem));
  if (!chainsTo(leaf!, intermediates, trust)) return problem(`Secret "${name}": ${TlsKeys.cert} is not signed by the CA of ${expect.trustField}`);
  const usages = leaf!.keyUsage;
  if (usages && !usages.includes(usageOids[expect.usage]))
    return problem(`Secret "${name}": ${TlsKeys.cert} is not a TLS ${expect.usage} certificate (extended key usage)`);
  const commonName = commonNameOf(leaf!);
  if (expect.commonName !== undefined && commonName !== expect.commonName) {
    return problem(`Secret "${name}": ${TlsKeys.cert} has common name "${(commonName ?? '').slice(0, 64)}", not "${expect.commonName}"`);
  }
  return { ok: true, value: { cert: certText, key: keyText } };
}
