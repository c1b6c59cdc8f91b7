import { z } from 'zod';
import { repositoryName } from './backup-types.js';
import { dnsLabel } from './schema-helpers.js';

/**
 * The Backup kind (keelson.io/v1): one object per base backup of a DatabaseCluster. A user creates
 * one to ask for a backup; the operator's schedules create them too. The operator runs a pending
 * one on the cluster's chosen member and records what pgBackRest reports. Deleting the object
 * deletes no data: retention alone removes backups from a repository. Source of the generated CRD.
 */

export const backupKind = 'Backup';
export const backupPlural = 'backups';
export const backupSingular = 'backup';
export const backupShortNames = ['kbk'];

export const backupPhases = ['Pending', 'Running', 'Completed', 'Failed', 'Expired'] as const;

export const backupObjectSpecSchema = z
  .object({
    cluster: dnsLabel.meta({ description: 'Name of the DatabaseCluster (same namespace) to back up.' }),
    type: z
      .enum(['full', 'diff', 'incr'])
      .default('full')
      .meta({ description: 'full, differential (changes since the last full) or incremental (since the last backup).' }),
    repository: repositoryName.optional().meta({ description: "Name of one of the cluster's spec.backup.repositories; the first when unset." }),
  })
  .meta({
    description: 'What to back up. Fixed at creation.',
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable: create another Backup' }],
  });

export const backupObjectStatusSchema = z
  .object({
    phase: z.enum(backupPhases).optional(),
    startedAt: z.string().optional(),
    stoppedAt: z.string().optional(),
    label: z.string().optional().meta({ description: "pgBackRest's backup label (what bootstrap.recovery.backup names)." }),
    lsnStart: z.string().optional(),
    lsnStop: z.string().optional(),
    timeline: z.number().int().optional(),
    systemIdentifier: z.string().optional(),
    sizeBytes: z.number().int().optional().meta({ description: 'Size of the database the backup holds.' }),
    repoSizeBytes: z
      .number()
      .int()
      .optional()
      .meta({ description: 'What this backup added to the repository (compressed, without what it shares with its prior).' }),
    member: z.string().optional().meta({ description: 'The instance the backup ran on.' }),
    repositoryIndex: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Position (from 1) of the repository in spec.backup.repositories when the backup started.' }),
    message: z.string().optional(),
  })
  .meta({ description: 'Observed state, written by the operator only.' });

export type BackupObjectSpec = z.infer<typeof backupObjectSpecSchema>;
export type BackupObjectStatus = z.infer<typeof backupObjectStatusSchema>;
export type BackupPhase = (typeof backupPhases)[number];

/** A Backup as the operator handles it (spec parsed, status as stored). */
export interface BackupObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string; creationTimestamp?: string; labels?: Record<string, string> };
  spec: BackupObjectSpec;
  status?: BackupObjectStatus;
}
