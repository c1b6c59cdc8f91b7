import type { V1EnvVar, V1PersistentVolumeClaim, V1VolumeMount } from '@kubernetes/client-node';
import type { BuildContext } from './context.js';

/**
 * spec.walStorage in the StatefulSet: a second claim template (`pgwal-<pod>`), its mount, and
 * KEELSON_WAL_DIR, the folder ha-node links pg_wal to before every start.
 */
export const walVolumeName = 'pgwal';
export const walMountPath = '/var/lib/postgresql/wal';
export const walDirPath = `${walMountPath}/pg_wal`;

export function walClaimTemplates(ctx: BuildContext, labels: Record<string, string>): V1PersistentVolumeClaim[] {
  const wal = ctx.cluster.spec.walStorage;
  if (!wal) return [];
  return [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: walVolumeName, labels },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: wal.storageClass, resources: { requests: { storage: wal.size } } },
    },
  ];
}

export function walMounts(ctx: BuildContext): V1VolumeMount[] {
  return ctx.cluster.spec.walStorage ? [{ name: walVolumeName, mountPath: walMountPath }] : [];
}

export function walEnv(ctx: BuildContext): V1EnvVar[] {
  return ctx.cluster.spec.walStorage ? [{ name: 'KEELSON_WAL_DIR', value: walDirPath }] : [];
}
