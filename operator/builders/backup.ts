import type { V1PersistentVolumeClaim, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { BackupRepositorySpec, RecoverySpec } from '../../api/crd/backup-types.js';
import { backupClaimName, commonLabels, MountPaths } from '../../api/naming.js';
import type { BackupSettingsInput, RecoveryTargetInput, RepositoryInput } from '../../api/ha-node/backup-settings.js';
import type { BuildContext } from './context.js';
import { backupTlsMounts, backupTlsVolumes, haNodeTlsServer } from './backup-tls.js';

/**
 * What the database pods need for pgBackRest: the settings ha-node reads (the settings document's `backup`), the
 * credentials and CA Secrets mounted as files, and the claims of filesystem repositories.
 * Each cluster is its own stanza (its name) under <repository>/<namespace>/<cluster>, so two
 * clusters never share an archive, and a restored cluster (a new name) never writes into its source's.
 */

const volumePrefix = 'backup-';

function joinPath(...parts: string[]): string {
  return `/${parts.join('/').split('/').filter(Boolean).join('/')}`;
}

/** Where one cluster's stanza lives inside a repository. */
export function repositoryPath(repository: BackupRepositorySpec, namespace: string, cluster: string): string {
  if (repository.s3) return joinPath(repository.s3.path, namespace, cluster);
  return joinPath(MountPaths.backupRepositories, repository.name, namespace, cluster);
}

/** One repository as ha-node's settings describe it (api/ha-node/backup-settings.ts). */
function haNodeRepository(repository: BackupRepositorySpec, namespace: string, cluster: string): RepositoryInput {
  const path = repositoryPath(repository, namespace, cluster);
  const s3 = repository.s3;
  if (!s3) return { kind: 'posix', path };
  const secrets = `${MountPaths.backupSecrets}/${repository.name}`;
  return {
    kind: 's3',
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    ...(s3.port !== undefined ? { port: s3.port } : {}),
    region: s3.region,
    path,
    uriStyle: s3.uriStyle,
    verifyTls: s3.verifyTLS,
    ...(s3.caSecret ? { caFile: `${secrets}-ca/${s3.caSecret.key}` } : {}),
    keyFile: `${secrets}/${s3.credentialsSecret.accessKeyIdKey}`,
    secretKeyFile: `${secrets}/${s3.credentialsSecret.secretAccessKeyKey}`,
  };
}

/** spec.bootstrap.recovery's target as ha-node's settings name it (api/ha-node/backup-settings.ts). */
function recoveryTarget(recovery: RecoverySpec): RecoveryTargetInput {
  const target: RecoveryTargetInput = {
    time: recovery.targetTime,
    lsn: recovery.targetLSN,
    name: recovery.targetName,
    xid: recovery.targetXID,
    immediate: recovery.targetImmediate,
    exclusive: recovery.exclusive,
    backup: recovery.backup,
  };
  return Object.fromEntries(Object.entries(target).filter(([, value]) => value !== undefined));
}

/** The settings document's `backup` for the cluster's ha-node, or undefined when backups are off. */
export function haNodeBackupSettings(ctx: BuildContext): BackupSettingsInput | undefined {
  const { spec, metadata } = ctx.cluster;
  const backup = spec.backup;
  if (!backup) return undefined;
  const recovery = spec.bootstrap.recovery;
  const source = recovery ? backup.repositories.find((r) => r.name === recovery.repository) : undefined;
  const standby = standbyRecovery(ctx);
  const tlsServer = haNodeTlsServer(ctx);
  return {
    stanza: metadata.name,
    repositories: backup.repositories.map((r) => haNodeRepository(r, metadata.namespace, metadata.name)),
    processMax: backup.processMax,
    retention: backup.retention,
    archiveTimeout: backup.archiveTimeout,
    ...(tlsServer ? { tlsServer } : {}),
    ...(recovery && source
      ? {
          recovery: {
            stanza: recovery.source.cluster,
            repository: haNodeRepository(source, recovery.source.namespace ?? metadata.namespace, recovery.source.cluster),
            target: recoveryTarget(recovery),
          },
        }
      : {}),
    ...(standby ? { recovery: standby } : {}),
  };
}

/**
 * A standby cluster of a backup repository (spec.replica.source.repository): restore the source
 * stanza's newest backup and replay its archive. Kept after promotion: it only matters at
 * bootstrap, and a changed environment would restart every pod.
 */
function standbyRecovery(ctx: BuildContext): BackupSettingsInput['recovery'] | undefined {
  const { spec, metadata } = ctx.cluster;
  const source = spec.replica?.source;
  const repository = source?.repository !== undefined ? spec.backup?.repositories.find((r) => r.name === source.repository) : undefined;
  const stanza = source?.stanza ?? source?.cluster;
  if (!source || !repository || !stanza) return undefined;
  return { stanza, repository: haNodeRepository(repository, source.namespace ?? metadata.namespace, stanza), target: {}, standby: true };
}

/** The Secrets the pods mount for the repositories: what must exist before backups can work. */
export function backupSecretRefs(ctx: BuildContext): { name: string; keys: string[]; field: string }[] {
  return (ctx.cluster.spec.backup?.repositories ?? []).flatMap((r, i) => {
    if (!r.s3) return [];
    const refs = [
      {
        name: r.s3.credentialsSecret.name,
        keys: [r.s3.credentialsSecret.accessKeyIdKey, r.s3.credentialsSecret.secretAccessKeyKey],
        field: `spec.backup.repositories[${i}].s3.credentialsSecret`,
      },
    ];
    if (r.s3.caSecret) refs.push({ name: r.s3.caSecret.name, keys: [r.s3.caSecret.key], field: `spec.backup.repositories[${i}].s3.caSecret` });
    return refs;
  });
}

export function backupVolumes(ctx: BuildContext): V1Volume[] {
  return [...repositoryVolumes(ctx), ...backupTlsVolumes(ctx)];
}

function repositoryVolumes(ctx: BuildContext): V1Volume[] {
  return (ctx.cluster.spec.backup?.repositories ?? []).flatMap((r): V1Volume[] => {
    if (r.volume) return [{ name: `${volumePrefix}${r.name}`, persistentVolumeClaim: { claimName: backupClaimName(r.name) } }];
    const s3 = r.s3!;
    const credentials: V1Volume = {
      name: `${volumePrefix}${r.name}`,
      secret: {
        secretName: s3.credentialsSecret.name,
        items: [s3.credentialsSecret.accessKeyIdKey, s3.credentialsSecret.secretAccessKeyKey].map((key) => ({ key, path: key })),
        defaultMode: 0o440,
      },
    };
    if (!s3.caSecret) return [credentials];
    return [
      credentials,
      {
        name: `${volumePrefix}${r.name}-ca`,
        secret: { secretName: s3.caSecret.name, items: [{ key: s3.caSecret.key, path: s3.caSecret.key }], defaultMode: 0o444 },
      },
    ];
  });
}

export function backupMounts(ctx: BuildContext): V1VolumeMount[] {
  return [...repositoryMounts(ctx), ...backupTlsMounts(ctx)];
}

function repositoryMounts(ctx: BuildContext): V1VolumeMount[] {
  return (ctx.cluster.spec.backup?.repositories ?? []).flatMap((r): V1VolumeMount[] => {
    if (r.volume) return [{ name: `${volumePrefix}${r.name}`, mountPath: `${MountPaths.backupRepositories}/${r.name}` }];
    const mounts = [{ name: `${volumePrefix}${r.name}`, mountPath: `${MountPaths.backupSecrets}/${r.name}`, readOnly: true }];
    if (r.s3!.caSecret) mounts.push({ name: `${volumePrefix}${r.name}-ca`, mountPath: `${MountPaths.backupSecrets}/${r.name}-ca`, readOnly: true });
    return mounts;
  });
}

/**
 * Claims of the filesystem repositories. No owner reference: backups must outlive the cluster
 * (restoring after losing it is what they are for); the operator creates a missing claim only.
 */
export function buildBackupClaims(ctx: BuildContext): V1PersistentVolumeClaim[] {
  const { metadata, spec } = ctx.cluster;
  return (spec.backup?.repositories ?? []).flatMap((r): V1PersistentVolumeClaim[] => {
    if (!r.volume) return [];
    return [
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: backupClaimName(r.name), namespace: metadata.namespace, labels: { ...commonLabels(metadata.name, 'backup-repository') } },
        spec: { accessModes: [r.volume.accessMode], storageClassName: r.volume.storageClass, resources: { requests: { storage: r.volume.size } } },
      },
    ];
  });
}
