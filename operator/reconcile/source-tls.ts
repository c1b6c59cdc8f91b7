import type { V1Secret } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import { names, TlsKeys } from '../../api/naming.js';
import { ownedMeta, type BuildContext } from '../builders/context.js';
import type { ReconcileDeps } from './deps.js';

/**
 * A standby cluster of a DatabaseCluster streams from it by the source's rules: TLS, and
 * replication by a client certificate the source's client CA signed for its replication role
 * (sidecar/ha-node/postgres/hba.ts). As CloudNativePG's replica clusters use the source's
 * `streaming_replica` Secret, the operator copies the source's `<source>-replication-tls`
 * (tls.crt, tls.key, ca.crt = the source's server CA) into `<cluster>-source-tls`, which every
 * database pod mounts as an optional volume (no roll when a swap makes a primary cluster a
 * standby). The copy follows the source's renewals on every pass.
 */

/** The source's replication client Secret as stored (base64 data), or undefined while it has none. */
export type SourceTlsData = Record<string, string>;

const copiedKeys = [TlsKeys.cert, TlsKeys.key, TlsKeys.ca] as const;

/** The data of `<source>-replication-tls` worth copying: certificate, key and CA all present. */
export function sourceTlsData(secret: V1Secret | undefined): SourceTlsData | undefined {
  const data = secret?.data;
  if (!data || !copiedKeys.every((key) => data[key])) return undefined;
  return Object.fromEntries(copiedKeys.map((key) => [key, data[key]!]));
}

export function buildSourceTlsSecret(ctx: BuildContext, data: SourceTlsData): V1Secret {
  const metadata = ownedMeta(ctx, names(ctx.cluster.metadata.name).sourceTlsSecret, 'source-tls');
  return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'kubernetes.io/tls', data };
}

/** Writes `<cluster>-source-tls` when the copy is missing or differs from the source's; nothing without source material. */
export async function ensureSourceTlsSecret(
  deps: Pick<ReconcileDeps, 'api' | 'recordWrite'>,
  ctx: BuildContext,
  data: SourceTlsData | undefined,
): Promise<void> {
  if (!data) return;
  const next = buildSourceTlsSecret(ctx, data);
  const stored = await deps.api.read(next);
  if (!stored) {
    deps.recordWrite('Secret', 'create');
    await deps.api.create(next).catch((error: unknown) => {
      if (apiStatusCode(error) !== 409) throw error;
    });
    return;
  }
  if (copiedKeys.every((key) => stored.data?.[key] === data[key])) return;
  deps.recordWrite('Secret', 'update');
  await deps.api.replace({ ...next, metadata: { ...stored.metadata, ...next.metadata, resourceVersion: stored.metadata?.resourceVersion } });
}
