import type { V1Secret } from '@kubernetes/client-node';
import type { TlsSecretContent } from '../certificates/plan.js';
import { names, rotateCertificatesAnnotation, TlsKeys } from '../../api/naming.js';
import { ownedMeta, type BuildContext } from './context.js';

/**
 * The two TLS Secrets database pods mount (kubernetes.io/tls, cert-manager's keys): the server's
 * certificate with the server and client CA bundles, and the replication client's certificate
 * with the server CA bundle. The operator writes them from its own CA or from the user's checked
 * Secrets (operator/certificates/).
 */

export type MountedTlsSecret = 'server' | 'replication';

const base64 = (text: string): string => Buffer.from(text).toString('base64');

export function tlsSecretName(clusterName: string, which: MountedTlsSecret): string {
  const n = names(clusterName);
  return which === 'server' ? n.serverTlsSecret : n.replicationTlsSecret;
}

export function buildTlsSecret(ctx: BuildContext, which: MountedTlsSecret, content: TlsSecretContent): V1Secret {
  const metadata = ownedMeta(ctx, tlsSecretName(ctx.cluster.metadata.name, which), `${which}-tls`);
  if (content.issuedFor) metadata.annotations = { [rotateCertificatesAnnotation]: content.issuedFor };
  const data: Record<string, string> = {
    [TlsKeys.cert]: base64(content.pair.cert),
    [TlsKeys.key]: base64(content.pair.key),
    [TlsKeys.ca]: base64(content.trust),
  };
  if (content.clientTrust) data[TlsKeys.clientCa] = base64(content.clientTrust);
  return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'kubernetes.io/tls', data };
}

/** What a stored Secret holds (undefined without a certificate and key). */
export function readTlsSecret(secret: V1Secret | undefined): TlsSecretContent | undefined {
  const decode = (key: string): string | undefined => (secret?.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString('utf8') : undefined);
  const cert = decode(TlsKeys.cert);
  const key = decode(TlsKeys.key);
  if (!cert || !key) return undefined;
  const clientTrust = decode(TlsKeys.clientCa);
  const issuedFor = secret?.metadata?.annotations?.[rotateCertificatesAnnotation];
  return { pair: { cert, key }, trust: decode(TlsKeys.ca) ?? '', ...(clientTrust ? { clientTrust } : {}), ...(issuedFor ? { issuedFor } : {}) };
}
