import type { V1Secret } from '@kubernetes/client-node';
import type { CaSecretData } from '../reconcile/backup-ca-rotation.js';
import { BackupTlsKeys } from '../../api/naming.js';
import { ownedMeta, type BuildContext } from './context.js';

/**
 * A CA Secret the operator keeps and rotates in two steps (reconcile/backup-ca-rotation.ts): the
 * trust bundle ca.crt whose first certificate signs with ca.key, and between the steps the staged
 * next CA in next.crt and next.key, keys no pod mounts. Used for the backup TLS CA and the
 * cluster's own CA (operator/certificates/).
 */

const base64 = (text: string): string => Buffer.from(text).toString('base64');

export function buildCaSecret(ctx: BuildContext, name: string, component: string, ca: CaSecretData, stagedAnnotation: string): V1Secret {
  const metadata = ownedMeta(ctx, name, component);
  const data: Record<string, string> = { [BackupTlsKeys.cert]: base64(ca.cert), [BackupTlsKeys.key]: base64(ca.key) };
  if (ca.nextCert && ca.nextKey) {
    data[BackupTlsKeys.nextCert] = base64(ca.nextCert);
    data[BackupTlsKeys.nextKey] = base64(ca.nextKey);
    if (ca.stagedAt) metadata.annotations = { [stagedAnnotation]: ca.stagedAt };
  }
  return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', data };
}

/** The CA data of a stored Secret (undefined when it holds no CA). */
export function readCaSecret(secret: V1Secret, stagedAnnotation: string): CaSecretData | undefined {
  const decode = (key: string): string | undefined => (secret.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString('utf8') : undefined);
  const cert = decode(BackupTlsKeys.cert);
  const key = decode(BackupTlsKeys.key);
  if (!cert || !key) return undefined;
  return {
    cert,
    key,
    nextCert: decode(BackupTlsKeys.nextCert),
    nextKey: decode(BackupTlsKeys.nextKey),
    stagedAt: secret.metadata?.annotations?.[stagedAnnotation],
  };
}
