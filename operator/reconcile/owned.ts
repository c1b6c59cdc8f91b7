import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { apiStatusCode, describeApiError } from '../../lib/kube/client.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { BuildContext } from '../builders/context.js';
import { usesBackupTls } from '../builders/backup-tls.js';
import { ensureCaSecret } from './ca-secret.js';
import { buildCredentialSecret, credentialKindsOf, generatePassword, type CredentialKind } from '../builders/secrets.js';
import { backupCaStagedAnnotation, backupTlsSecretName, podSelector, SecretKeys, selectorString, VolumeNames } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';
import { walVolumeName } from '../builders/wal-volume.js';
import { claimsAboveSize, claimsToGrow } from './storage.js';

/** Reconcile steps for objects that are not plain desired-state writes: Secrets, PVCs, API credentials. */

export async function ensureSecrets(
  deps: ReconcileDeps,
  ctx: BuildContext,
  shared: Partial<Record<CredentialKind, { username: string; password: string }>> = {},
): Promise<void> {
  await Promise.all(
    credentialKindsOf(ctx).map(async (which) => {
      const secret = buildCredentialSecret(ctx, which, '');
      if (await deps.api.read(secret)) return; // never rotate: an existing Secret is left alone
      deps.recordWrite('Secret', 'create');
      // A standby cluster shares its source's replication (and superuser) credentials: it streams as that user.
      const given = shared[which];
      await deps.api.create(given ? buildCredentialSecret(ctx, which, given.password, given.username) : buildCredentialSecret(ctx, which, generatePassword()));
      await deps.events.record(
        ctx.cluster.metadata,
        'Normal',
        'CreatedSecret',
        `${given ? "copied the source's" : 'generated'} ${which} credentials in ${secret.metadata?.name}`,
      );
    }),
  );
}

/** The cluster CA of pgBackRest's TLS server (backups on a standby): see ensureCaSecret. */
export async function ensureBackupTlsSecret(
  deps: Pick<ReconcileDeps, 'api' | 'events' | 'recordWrite' | 'now' | 'caTrustPropagationMs'>,
  ctx: BuildContext,
): Promise<void> {
  if (!usesBackupTls(ctx)) return;
  const { name, namespace } = ctx.cluster.metadata;
  const kind = {
    secretName: backupTlsSecretName(name),
    component: 'backup-tls',
    caName: `${name}.${namespace}.backup.keelson.io`,
    stagedAnnotation: backupCaStagedAnnotation,
    what: 'backup TLS CA',
    eventPrefix: 'BackupCa',
  };
  await ensureCaSecret(deps, ctx, kind);
}

/**
 * Grows the data PVCs when spec.storage.size went up, and the WAL PVCs with spec.walStorage.size
 * (StatefulSet templates cannot change). The API server lets only Bound claims grow, so a Pending
 * one waits for a later pass. A refusal (its StorageClass cannot expand: 403) is reported and does
 * not fail the rest of the pass, as is a size below a claim's (a Warning Event: volumes never
 * shrink; claims auto-grow took above the size, up to its max, are expected).
 */
export async function growVolumes(deps: ReconcileDeps, cluster: DatabaseCluster): Promise<void> {
  const { name, namespace } = cluster.metadata;
  const claims = await deps.api.listClaims(namespace, selectorString(podSelector(name)));
  const { storage, walStorage } = cluster.spec;
  const kinds = [{ prefix: `${VolumeNames.data}-`, field: 'spec.storage.size', size: storage.size, max: storage.autoGrow?.max }];
  if (walStorage) kinds.push({ prefix: `${walVolumeName}-`, field: 'spec.walStorage.size', size: walStorage.size, max: walStorage.autoGrow?.max });
  for (const kind of kinds) {
    const own = claims.filter((c) => c.metadata?.name?.startsWith(kind.prefix));
    for (const claim of claimsToGrow(
      own.filter((c) => c.status?.phase === 'Bound'),
      kind.size,
    )) {
      deps.recordWrite('PersistentVolumeClaim', 'update');
      claim.spec!.resources = { ...claim.spec!.resources, requests: { ...claim.spec!.resources?.requests, storage: kind.size } };
      try {
        await deps.api.core.replaceNamespacedPersistentVolumeClaim({ namespace, name: claim.metadata!.name!, body: claim });
      } catch (err) {
        if (apiStatusCode(err) !== 403 && apiStatusCode(err) !== 422) throw err;
        deps.logger.warn({ claim: claim.metadata!.name, err: describeApiError(err) }, 'volume growth refused');
        await deps.events.record(cluster.metadata, 'Warning', 'VolumeResizeRefused', `${claim.metadata!.name}: ${describeApiError(err)}`);
        continue;
      }
      await deps.events.record(cluster.metadata, 'Normal', 'VolumeResize', `${claim.metadata!.name} → ${kind.size}`);
    }
    // A smaller size cannot be applied; say so rather than leave the spec silently unmet.
    for (const claim of claimsAboveSize(own, kind.max ?? kind.size)) {
      const message = `${claim.metadata!.name} keeps ${String(claim.spec?.resources?.requests?.storage)}: volumes never shrink (${kind.field} ${kind.size})`;
      await deps.events.record(cluster.metadata, 'Warning', 'VolumeShrinkIgnored', message);
    }
  }
}

/** Hands ha-node's API credentials (from the cluster's api Secret) to the client for these pods. */
export async function useApiCredentials(deps: ReconcileDeps, ctx: BuildContext, pods: V1Pod[]): Promise<void> {
  const secret = (await deps.api.read(buildCredentialSecret(ctx, 'api', ''))) as V1Secret | undefined;
  const decode = (value: string | undefined) => (value ? Buffer.from(value, 'base64').toString('utf8') : undefined);
  const username = decode(secret?.data?.[SecretKeys.username]);
  const password = decode(secret?.data?.[SecretKeys.password]);
  const hosts = pods.map((pod) => pod.status?.podIP).filter((ip): ip is string => Boolean(ip));
  deps.haNode.useCredentials(hosts, username && password ? { username, password } : undefined);
}
