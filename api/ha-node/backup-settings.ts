/**
 * Backups, WAL archiving and restore with pgBackRest: settings, pgbackrest.conf rendering, the
 * engine's commands, `pgbackrest info` parsing, the keeper that runs them beside the HA loop, and
 * the restore bootstrap. This module: the backup settings ha-node reads (the settings document's
 * `backup`, or KEELSON_BACKUP as JSON when ha-node runs alone), the schema the operator builds them with.
 */
import { z } from 'zod';
import { Ports } from '../../lib/ports.js';

const absolutePath = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^\/[^\n\r]*$/, 'must be an absolute path');
const fileName = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^\/[^\n\r]*$/, 'must be an absolute file path');
/** A stanza name pgBackRest accepts and that is safe on a command line and in a repository path. */
export const stanzaName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, ".", "_" and "-" (at most 63)');

const posixRepository = z.object({
  kind: z.literal('posix'),
  /** Folder of the repository (a mounted volume). */
  path: absolutePath,
});

const s3Repository = z.object({
  kind: z.literal('s3'),
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name'),
  /** Host name of the S3 endpoint (no scheme); pgBackRest always speaks HTTPS. */
  endpoint: z.string().regex(/^[A-Za-z0-9.-]{1,253}$/, 'a host name without scheme or port'),
  port: z.number().int().min(1).max(65535).optional(),
  region: z.string().regex(/^[A-Za-z0-9-]{1,64}$/),
  /** Path prefix inside the bucket. */
  path: absolutePath.default('/'),
  uriStyle: z.enum(['host', 'path']).default('host'),
  verifyTls: z.boolean().default(true),
  /** PEM bundle the endpoint's certificate is checked against (system store when unset). */
  caFile: fileName.optional(),
  /** Files holding the access key id and the secret access key (a mounted Secret). */
  keyFile: fileName,
  secretKeyFile: fileName,
});

export const repositorySchema = z.discriminatedUnion('kind', [posixRepository, s3Repository]);

const retentionSchema = z
  .object({
    /** Full backups kept (pgBackRest repo-retention-full, type count). */
    fullCount: z.number().int().min(1).max(9999).optional(),
    /** Days of recovery window kept (pgBackRest repo-retention-full, type time). */
    windowDays: z.number().int().min(1).max(9999).optional(),
  })
  .refine((r) => r.fullCount === undefined || r.windowDays === undefined, { message: 'give fullCount or windowDays, not both' });

export const lsnPattern = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;

const recoveryTargetSchema = z
  .object({
    /** Recover to this moment (ISO 8601 with a zone); latest (end of the archive) when no target is set. */
    time: z
      .string()
      .refine((t) => /[zZ]|[+-]\d\d:?\d\d$/.test(t) && Number.isFinite(Date.parse(t)), 'an ISO 8601 time with a zone')
      .optional(),
    /** A WAL position (recovery_target_lsn). */
    lsn: z.string().regex(lsnPattern, 'a WAL position such as 0/3000060').optional(),
    /** A restore point made with pg_create_restore_point (recovery_target_name). */
    name: z.string().min(1).max(63).optional(),
    /** A transaction id (recovery_target_xid): recovery stops at its commit. */
    xid: z
      .string()
      .regex(/^[1-9]\d{0,19}$/, 'a transaction id (digits)')
      .optional(),
    /** Stop as soon as the backup is consistent (recovery_target=immediate). */
    immediate: z.boolean().optional(),
    /** Stop just before the target instead of just after it (recovery_target_inclusive=false). */
    exclusive: z.boolean().optional(),
    /** Restore this backup set (pgBackRest label); the newest before the target when unset. */
    backup: z
      .string()
      .regex(/^\d{8}-\d{6}F(_\d{8}-\d{6}[DI])?$/, 'a pgBackRest backup label')
      .optional(),
  })
  .refine((t) => [t.time, t.lsn, t.name, t.xid, t.immediate ? true : undefined].filter((v) => v !== undefined).length <= 1, {
    message: 'give at most one of time, lsn, name, xid, immediate',
  });

const recoverySchema = z
  .object({
    /** The source cluster's stanza and repository; never this cluster's own. */
    stanza: stanzaName,
    repository: repositorySchema,
    target: recoveryTargetSchema.default({}),
    /**
     * A standby cluster of the source: restore its newest backup and keep replaying its archive
     * (standby_cluster.repository) instead of promoting at a target. The target must stay unset.
     */
    standby: z.boolean().optional(),
  })
  .refine((r) => !r.standby || Object.values(r.target).every((v) => v === undefined), {
    message: 'a standby (recovery.standby) follows the end of the archive: give no target',
    path: ['target'],
  });

/**
 * pgBackRest's TLS server on every member, for backups taken on a standby: the cluster CA (a
 * mounted Secret) from which each member issues its own certificate for its pod IP at start.
 */
const tlsServerSchema = z.object({
  caFile: fileName,
  caKeyFile: fileName,
  port: z.number().int().min(1).max(65535).default(Ports.pgbackrestServer),
  /** How often the member looks at the mounted CA for a rotation (seconds). */
  checkSeconds: z.number().int().min(1).max(3600).default(30),
});

export const backupConfigSchema = z.object({
  /** This cluster's stanza. */
  stanza: stanzaName,
  repositories: z.array(repositorySchema).min(1).max(4),
  processMax: z.number().int().min(1).max(32).default(2),
  compressType: z.enum(['lz4', 'zst']).default('lz4'),
  retention: retentionSchema.default({}),
  /** archive_timeout in seconds: the most WAL time a quiet primary may hold back from the archive. */
  archiveTimeout: z.number().int().min(0).max(86_400).default(60),
  /** Bootstrap a new cluster from this repository instead of initdb. */
  recovery: recoverySchema.optional(),
  /** Set when backups may run on a standby (spec.backup.target prefer-standby). */
  tlsServer: tlsServerSchema.optional(),
});

export type Repository = z.infer<typeof repositorySchema>;
export type S3Repository = z.infer<typeof s3Repository>;
export type BackupConfig = z.infer<typeof backupConfigSchema>;
export type RecoveryConfig = z.infer<typeof recoverySchema>;
export type TlsServerConfig = z.infer<typeof tlsServerSchema>;
/** What the operator builds (defaults may be left out). */
export type BackupSettingsInput = z.input<typeof backupConfigSchema>;
export type RepositoryInput = z.input<typeof repositorySchema>;
export type RecoveryTargetInput = z.input<typeof recoveryTargetSchema>;

/** Parses the settings document's `backup` (JSON text from KEELSON_BACKUP); the error names the field, as every configuration error does. */
export function parseBackupConfig(input: unknown): BackupConfig {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw new Error('invalid configuration key "backup": not valid JSON');
    }
  }
  const parsed = backupConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid configuration key "backup": ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const config = parsed.data;
  if (config.recovery && sameLocation(config.recovery.stanza, config.recovery.repository, config.stanza, config.repositories)) {
    throw new Error(
      'invalid configuration key "backup": recovery: the source is this cluster\'s own stanza and repository; a restored cluster must archive elsewhere',
    );
  }
  return config;
}

/** Where a stanza lives: two clusters with the same location would archive into one stanza. */
export function repositoryLocation(repository: Repository): string {
  return repository.kind === 'posix'
    ? `posix:${repository.path}`
    : `s3:${repository.endpoint}:${repository.port ?? 443}/${repository.bucket}${repository.path}`;
}

function sameLocation(stanza: string, repository: Repository, ownStanza: string, own: Repository[]): boolean {
  const where = repositoryLocation(repository).replace(/\/+$/, '');
  return stanza === ownStanza && own.some((r) => repositoryLocation(r).replace(/\/+$/, '') === where);
}
