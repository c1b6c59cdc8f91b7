import { createPrivateKey, X509Certificate } from 'node:crypto';
import { certificateHosts, pemCertificates, type PemPair } from '../../lib/tls-certificates.js';
import { commonNameOf } from './secret-material.js';

/**
 * When the operator re-issues a certificate it made: at two thirds of its life (a third of it is
 * left for a renewal that fails to be retried), when another CA signs (after a CA rotation's
 * switch), when the names it must carry changed, or on request (the rotate annotation). Pure.
 */

export interface IssuedExpectations {
  /** The signing CA's trust bundle: its first certificate must have signed the certificate. */
  signer: string;
  commonName: string;
  /** subjectAltNames, in any order; none for a client certificate. */
  hosts: string[];
  /** The rotation request to honour, and the one the stored certificate was issued for. */
  requested?: string;
  issuedFor?: string;
}

/** The moment a certificate is due for renewal: two thirds into its validity. */
export function renewalTime(cert: string): Date {
  const x509 = new X509Certificate(cert);
  const from = new Date(x509.validFrom).getTime();
  const to = new Date(x509.validTo).getTime();
  return new Date(from + ((to - from) * 2) / 3);
}

const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);

/** Why `current` must be re-issued now, or undefined while it is good. */
export function renewalReason(current: PemPair | undefined, expect: IssuedExpectations, now: Date): string | undefined {
  if (!current) return 'the first one';
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(current.cert);
    if (!x509.checkPrivateKey(createPrivateKey(current.key))) return 'the stored key does not match the stored certificate';
  } catch {
    return 'the stored certificate cannot be read';
  }
  if (renewalTime(current.cert) <= now) return `two thirds of its life passed (valid until ${new Date(x509.validTo).toISOString()})`;
  const signer = pemCertificates(expect.signer)[0];
  if (!signer || !x509.verify(new X509Certificate(signer).publicKey)) return 'another CA signs now';
  if (commonNameOf(x509) !== expect.commonName) return `its common name is not ${expect.commonName}`;
  if (!sameSet(certificateHosts(current.cert), expect.hosts)) return 'the names it must cover changed';
  if (expect.requested && expect.requested !== expect.issuedFor) return `rotation requested (${expect.requested.slice(0, 63)})`;
  return undefined;
}
