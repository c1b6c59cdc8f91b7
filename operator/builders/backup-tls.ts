import type { V1ContainerPort, V1Secret, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import type { PemPair } from '../../lib/tls-certificates.js';
import { BackupTlsKeys, backupTlsSecretName, MountPaths } from '../naming.js';
import { ownedMeta, type BuildContext } from './context.js';

/**
 * What backups on a standby (spec.backup.target prefer-standby) add to a cluster: the Secret with
 * the cluster CA, generated once by the operator and never rotated by it, mounted into the
 * database pods, where each member issues its own pgBackRest TLS certificate for its pod IP.
 */

const volumeName = 'backup-tls';

export function usesBackupTls(ctx: BuildContext): boolean {
  return ctx.cluster.spec.backup?.target === 'prefer-standby';
}

export function buildBackupTlsSecret(ctx: BuildContext, ca: PemPair): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: ownedMeta(ctx, backupTlsSecretName(ctx.cluster.metadata.name), 'backup-tls'),
    type: 'Opaque',
    data: { [BackupTlsKeys.cert]: Buffer.from(ca.cert).toString('base64'), [BackupTlsKeys.key]: Buffer.from(ca.key).toString('base64') },
  };
}

/** ha-node's tlsServer settings (sidecar/ha-node/backup/settings.ts). */
export function haNodeTlsServer(ctx: BuildContext): Record<string, unknown> | undefined {
  if (!usesBackupTls(ctx)) return undefined;
  return { caFile: `${MountPaths.backupTls}/${BackupTlsKeys.cert}`, caKeyFile: `${MountPaths.backupTls}/${BackupTlsKeys.key}`, port: Ports.pgbackrestServer };
}

export function backupTlsVolumes(ctx: BuildContext): V1Volume[] {
  if (!usesBackupTls(ctx)) return [];
  const items = [BackupTlsKeys.cert, BackupTlsKeys.key].map((key) => ({ key, path: key }));
  return [{ name: volumeName, secret: { secretName: backupTlsSecretName(ctx.cluster.metadata.name), items, defaultMode: 0o440 } }];
}

export function backupTlsMounts(ctx: BuildContext): V1VolumeMount[] {
  return usesBackupTls(ctx) ? [{ name: volumeName, mountPath: MountPaths.backupTls, readOnly: true }] : [];
}

export function backupTlsPorts(ctx: BuildContext): V1ContainerPort[] {
  return usesBackupTls(ctx) ? [{ name: 'pgbackrest', containerPort: Ports.pgbackrestServer, protocol: 'TCP' }] : [];
}
