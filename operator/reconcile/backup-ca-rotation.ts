/**
 * Rotation of the backup TLS CA (`<cluster>-backup-tls`) before it expires, in two steps so that
 * no member ever meets a certificate it does not trust:
 *  1. stage: a new CA joins the trust bundle (`ca.crt` = [current, new]) while the current one
 *     still signs; its key waits in `next.key`, a key the pods do not mount;
 *  2. switch, once every kubelet has had time to refresh the mounted Secret: the new CA signs
 *     (`ca.crt` = [new, previous], `ca.key` = new). Members re-issue their certificates from it;
 *     one still holding a certificate from the previous CA stays trusted until that CA expires.
 * Expired CAs leave the bundle. Pure: the caller reads and writes the Secret.
 */
import { certificateNotAfter, pemCertificates, type PemPair } from '../../lib/tls-certificates.js';

const dayMs = 24 * 3600_000;

export interface CaRotationPolicy {
  /** Rotate when the signing CA has less than this left. */
  renewBeforeMs: number;
  /** Time between staging and switching: a kubelet refreshes mounted Secrets within about a minute. */
  propagationMs: number;
}

export const defaultCaRotation: CaRotationPolicy = { renewBeforeMs: 90 * dayMs, propagationMs: 3 * 60_000 };

/** The Secret's keys, decoded; next* only between the two steps. */
export interface CaSecretData {
  cert: string;
  key: string;
  nextCert?: string;
  nextKey?: string;
  /** When the new CA was staged (ISO time). */
  stagedAt?: string;
}

export type CaRotationStep = { kind: 'none' } | { kind: 'stage' | 'switch' | 'prune'; data: CaSecretData; message: string };

const unexpired = (certs: string[], now: Date): string[] => certs.filter((c) => certificateNotAfter(c) > now);
const sameCert = (a: string, b: string): boolean => a.trim() === b.trim();

/**
 * What to do with the CA Secret now; `newCa` makes the next CA (called only when staging). `what`
 * names the CA in messages (the cluster's own TLS CA rotates the same way: operator/certificates/).
 * `requested`: a rotation was asked for (the cluster's rotate-ca annotation): stage now, however
 * long the CA has left; the switch still waits for the kubelets.
 */
export function nextCaStep(
  data: CaSecretData,
  now: Date,
  newCa: () => PemPair,
  policy: CaRotationPolicy = defaultCaRotation,
  what = 'backup TLS CA',
  requested = false,
): CaRotationStep {
  const bundle = pemCertificates(data.cert);
  const signing = bundle[0];
  if (!signing) return { kind: 'none' };
  if (data.nextCert && data.nextKey) {
    const stagedAt = Date.parse(data.stagedAt ?? '');
    if (Number.isFinite(stagedAt) && now.getTime() - stagedAt < policy.propagationMs) return { kind: 'none' };
    const previous = unexpired(bundle, now).filter((c) => !sameCert(c, data.nextCert!));
    return {
      kind: 'switch',
      data: { cert: [data.nextCert, ...previous.slice(0, 1)].join(''), key: data.nextKey },
      message: `the new ${what} (valid until ${certificateNotAfter(data.nextCert).toISOString()}) signs from now on; members re-issue their certificates`,
    };
  }
  const kept = unexpired(bundle, now);
  if (requested || certificateNotAfter(signing).getTime() - now.getTime() <= policy.renewBeforeMs) {
    const next = newCa();
    const others = kept.filter((c) => !sameCert(c, signing));
    const why = requested ? `a rotation of the ${what} was requested` : `the ${what} expires ${certificateNotAfter(signing).toISOString()}`;
    return {
      kind: 'stage',
      data: { cert: [signing, next.cert, ...others].join(''), key: data.key, nextCert: next.cert, nextKey: next.key, stagedAt: now.toISOString() },
      message: `${why}: a new CA is trusted now and signs from the next step on`,
    };
  }
  if (kept.length < bundle.length && kept.length > 0 && sameCert(kept[0]!, signing))
    return { kind: 'prune', data: { cert: kept.join(''), key: data.key }, message: `an expired CA left the ${what} trust bundle` };
  return { kind: 'none' };
}
