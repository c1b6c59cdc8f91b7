import { backupKind, type BackupObject } from '../../api/crd/backup-kind.js';
import { apiVersion } from '../../api/crd/types.js';
import { commonLabels, scheduledBackupName } from '../../api/naming.js';
import type { BuildContext } from './context.js';

/**
 * The Backup object a schedule (or the first backup after archiving works) creates. No owner
 * reference: a Backup describes data that outlives the cluster (a deleted cluster's backups are
 * what a new one is restored from), and deleting it deletes no data either way.
 */
export function buildScheduledBackup(ctx: BuildContext, type: 'full' | 'diff' | 'incr', reason: { schedule: string; dueAt: string } | 'initial'): BackupObject {
  const { name, namespace } = ctx.cluster.metadata;
  return {
    apiVersion,
    kind: backupKind,
    metadata: {
      name: reason === 'initial' ? scheduledBackupName(name, 'initial') : scheduledBackupName(name, type, reason.dueAt),
      namespace,
      labels: { ...commonLabels(name, 'backup'), 'keelson.io/backup-schedule': reason === 'initial' ? 'initial' : reason.schedule },
    },
    spec: { cluster: name, type },
  };
}
