import { z } from 'zod';
import { cronPattern } from '../../lib/cron.js';
import { dnsLabel, storageQuantity } from './schema-helpers.js';

/**
 * spec.backup and spec.bootstrap.recovery of the DatabaseCluster API: pgBackRest repositories,
 * schedules, retention, and the repository a new cluster is restored from. Part of the zod source
 * the CRD is generated from (types.ts); validate.ts repeats the CEL rules.
 */

const secretName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Secret name (DNS-1123 subdomain)');
const secretKey = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[-._a-zA-Z0-9]+$/, 'must be a Secret key');

const s3Schema = z
  .object({
    bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name'),
    endpoint: z.string().regex(/^[A-Za-z0-9.-]{1,253}$/, 'must be a host name without scheme or port (HTTPS is always used)'),
    port: z.number().int().min(1).max(65535).optional(),
    region: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/)
      .default('us-east-1'),
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9._/-]{0,200}$/, 'must be an absolute path prefix')
      .default('/keelson')
      .meta({ description: 'Prefix inside the bucket; each cluster keeps its stanza under <path>/<namespace>/<cluster>.' }),
    uriStyle: z.enum(['host', 'path']).default('host'),
    verifyTLS: z.boolean().default(true),
    caSecret: z
      .object({ name: secretName, key: secretKey.default('ca.crt') })
      .optional()
      .meta({ description: 'CA bundle the endpoint certificate is verified against (system store when unset).' }),
    credentialsSecret: z
      .object({ name: secretName, accessKeyIdKey: secretKey.default('accessKeyId'), secretAccessKeyKey: secretKey.default('secretAccessKey') })
      .meta({ description: 'Secret holding the access key id and the secret access key.' }),
  })
  .meta({ description: 'S3-compatible object storage.' });

const volumeSchema = z
  .object({
    size: storageQuantity.default('2Gi'),
    storageClass: z.string().optional(),
    accessMode: z.enum(['ReadWriteMany', 'ReadWriteOnce']).default('ReadWriteMany').meta({
      description: 'Every database pod mounts the repository (WAL is pushed by whichever is primary): ReadWriteMany unless all pods share one node.',
    }),
  })
  .meta({
    description:
      'A filesystem repository on a PersistentVolumeClaim (keelson-backup-<name>, shared by the clusters of the namespace, kept when a cluster is deleted).',
  });

export const repositoryName = z.string().regex(/^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$/, 'must be a short DNS label (at most 20 characters)');

export const backupRepositorySchema = z
  .object({
    name: repositoryName,
    s3: s3Schema.optional(),
    volume: volumeSchema.optional(),
  })
  .refine((r) => (r.s3 === undefined) !== (r.volume === undefined), { message: 'set exactly one of s3 or volume' })
  .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.s3) != has(self.volume)', message: 'set exactly one of s3 or volume' }] });

const cron = z.string().regex(new RegExp(cronPattern), 'must be a five-field cron schedule (minute hour day-of-month month day-of-week, UTC)');

export const backupSchema = z
  .object({
    repositories: z
      .array(backupRepositorySchema)
      .min(1)
      .max(4)
      .meta({ description: 'WAL is archived into every repository; scheduled backups go to the first.' }),
    schedules: z
      .object({
        full: cron.optional(),
        differential: cron.optional(),
        incremental: cron.optional(),
        immediate: z
          .boolean()
          .default(false)
          .meta({ description: 'Take a full backup as soon as WAL archiving works, when the repository has none of this cluster yet.' }),
      })
      .default({ immediate: false })
      .meta({ description: 'Cron schedules (UTC); each due time creates a Backup object, which the operator runs.' }),
    retention: z
      .object({
        fullCount: z.number().int().min(1).max(9999).optional().meta({ description: 'Full backups kept (older ones and the WAL only they need are expired).' }),
        windowDays: z.number().int().min(1).max(9999).optional().meta({ description: 'Days of recovery window kept instead of a count.' }),
      })
      .refine((r) => r.fullCount === undefined || r.windowDays === undefined, { message: 'set fullCount or windowDays, not both' })
      .default({})
      .meta({ 'x-kubernetes-validations': [{ rule: '!(has(self.fullCount) && has(self.windowDays))', message: 'set fullCount or windowDays, not both' }] }),
    archiveTimeout: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(60)
      .meta({ description: 'Seconds after which a quiet primary switches WAL segments, bounding what the archive lacks (RPO).' }),
    processMax: z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(2)
      .meta({ description: 'Parallel pgBackRest processes for backup, restore and asynchronous archiving.' }),
    target: z.enum(['primary', 'prefer-standby']).default('primary').meta({
      description:
        "Where backups run: on the primary, or on a streaming standby when one streams (the primary otherwise). prefer-standby runs pgBackRest's TLS server in every database pod, with certificates from a cluster CA the operator keeps in the Secret <cluster>-backup-tls.",
    }),
  })
  .meta({ description: 'Continuous WAL archiving and base backups with pgBackRest.' });

export const recoverySchema = z
  .object({
    source: z.object({
      cluster: dnsLabel.meta({ description: 'Name of the cluster whose backups are restored (its stanza).' }),
      namespace: dnsLabel.optional(),
    }),
    repository: repositoryName.meta({ description: "Name of one of spec.backup.repositories holding the source's backups (same bucket or volume)." }),
    targetTime: z
      .string()
      .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$/, 'must be an RFC 3339 time with a zone, such as 2026-01-31T12:00:00Z')
      .refine((t) => Number.isFinite(Date.parse(t)), 'must be a valid time')
      .optional()
      .meta({ description: 'Recover to this moment (RFC 3339 with a zone); the end of the archive when unset.' }),
    targetLSN: z
      .string()
      .regex(/^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/, 'must be a WAL position such as 0/3000060')
      .optional()
      .meta({ description: 'Recover to this WAL position (recovery_target_lsn).' }),
    targetName: z
      .string()
      .min(1)
      .max(63)
      .optional()
      .meta({ description: 'Recover to this restore point (made with pg_create_restore_point); name the backup when it lies before the newest one.' }),
    targetXID: z
      .string()
      .regex(/^[1-9]\d{0,19}$/, 'must be a transaction id (digits)')
      .optional()
      .meta({ description: 'Recover to the commit of this transaction (recovery_target_xid); name the backup when it lies before the newest one.' }),
    targetImmediate: z.boolean().optional().meta({ description: 'Stop as soon as the restored backup is consistent (recovery_target=immediate).' }),
    exclusive: z
      .boolean()
      .optional()
      .meta({ description: 'Stop just before the target instead of just after it. Default: before for a time, after for an LSN or xid.' }),
    backup: z
      .string()
      .regex(/^\d{8}-\d{6}F(_\d{8}-\d{6}[DI])?$/, 'must be a pgBackRest backup label')
      .optional(),
  })
  .refine((r) => [r.targetTime, r.targetLSN, r.targetName, r.targetXID, r.targetImmediate ? true : undefined].filter((v) => v !== undefined).length <= 1, {
    message: 'set at most one of targetTime, targetLSN, targetName, targetXID, targetImmediate',
  })
  .meta({
    description: "Create this NEW cluster from a backup of another one (point-in-time recovery). It archives into its own stanza, never the source's.",
    'x-kubernetes-validations': [
      {
        rule: '[has(self.targetTime), has(self.targetLSN), has(self.targetName), has(self.targetXID), has(self.targetImmediate) && self.targetImmediate].filter(x, x).size() <= 1',
        message: 'set at most one of targetTime, targetLSN, targetName, targetXID, targetImmediate',
      },
    ],
  });

export type BackupSpec = z.infer<typeof backupSchema>;
export type BackupRepositorySpec = z.infer<typeof backupRepositorySchema>;
export type RecoverySpec = z.infer<typeof recoverySchema>;
