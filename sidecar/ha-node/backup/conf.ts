/**
 * Pure rendering of pgbackrest.conf. The file holds repository credentials, so the caller writes it
 * private to the PostgreSQL account; nothing here logs.
 */
import { dirname, join } from 'node:path';
import type { BackupConfig, Repository } from '../../../api/ha-node/backup-settings.js';

/** The files pgBackRest uses, all on the data volume (beside the data directory, never inside it). */
export interface BackupPaths {
  root: string;
  /** This cluster's configuration (archive-push, archive-get, backup, check, info). */
  conf: string;
  /** The restore source's configuration (only while bootstrapping from a repository). */
  sourceConf: string;
  /** archive-async queue: WAL waiting to be pushed, WAL fetched ahead for replay. */
  spool: string;
  log: string;
  lock: string;
}

export function backupPaths(dataDir: string): BackupPaths {
  const root = join(dirname(dataDir), 'pgbackrest');
  return {
    root,
    conf: join(root, 'pgbackrest.conf'),
    sourceConf: join(root, 'source.conf'),
    spool: join(root, 'spool'),
    log: join(root, 'log'),
    lock: join(root, 'lock'),
  };
}

export interface S3Credentials {
  key: string;
  secretKey: string;
}

export interface LocalServer {
  dataDir: string;
  port: number;
  socketDir: string;
  user: string;
}

export interface ConfInput {
  stanza: string;
  repositories: Repository[];
  /** Credentials of each S3 repository, by index (undefined for filesystem ones). */
  credentials: (S3Credentials | undefined)[];
  config: Pick<BackupConfig, 'processMax' | 'compressType' | 'retention'>;
  server: LocalServer;
  paths: BackupPaths;
  /** Lines added to [global] (the member's TLS server). */
  extraGlobal?: string[];
}

/** A value on one line: pgBackRest reads to the end of the line, so a newline would inject an option. */
function line(name: string, value: string | number): string {
  const text = String(value);
  if (/[\r\n]/.test(text)) throw new Error(`pgBackRest option ${name} must not contain a line break`);
  return `${name}=${text}`;
}

export function repositoryLines(
  index: number,
  repository: Repository,
  credentials: S3Credentials | undefined,
  retention: ConfInput['config']['retention'],
): string[] {
  const p = `repo${index}`;
  // Bundles small files into larger repository objects: fewer files to write, sync and read back.
  const lines = [line(`${p}-path`, repository.path), line(`${p}-bundle`, 'y')];
  if (retention.fullCount !== undefined) lines.push(line(`${p}-retention-full-type`, 'count'), line(`${p}-retention-full`, retention.fullCount));
  if (retention.windowDays !== undefined) lines.push(line(`${p}-retention-full-type`, 'time'), line(`${p}-retention-full`, retention.windowDays));
  if (repository.kind === 'posix') return [line(`${p}-type`, 'posix'), ...lines];
  if (!credentials) throw new Error(`repository ${index}: S3 credentials are missing`);
  lines.unshift(line(`${p}-type`, 's3'));
  lines.push(
    line(`${p}-s3-bucket`, repository.bucket),
    line(`${p}-s3-endpoint`, repository.endpoint),
    line(`${p}-s3-region`, repository.region),
    line(`${p}-s3-uri-style`, repository.uriStyle),
    line(`${p}-storage-verify-tls`, repository.verifyTls ? 'y' : 'n'),
    line(`${p}-s3-key`, credentials.key),
    line(`${p}-s3-key-secret`, credentials.secretKey),
  );
  if (repository.port !== undefined) lines.push(line(`${p}-storage-port`, repository.port));
  if (repository.caFile) lines.push(line(`${p}-storage-ca-file`, repository.caFile));
  return lines;
}

/**
 * One stanza (this cluster, or the restore source) on the local server. Asynchronous archiving
 * spools on the data volume; no archive-push-queue-max, because pgBackRest would drop WAL past
 * it and leave a gap: an unreachable repository must keep WAL, and show in status instead.
 */
export function renderPgBackRestConf(input: ConfInput): string {
  const { paths, server, config } = input;
  const global = [
    '[global]',
    line('log-path', paths.log),
    line('lock-path', paths.lock),
    line('spool-path', paths.spool),
    'log-level-console=warn',
    'log-level-stderr=off',
    'log-level-file=info',
    line('compress-type', config.compressType),
    line('process-max', config.processMax),
    'archive-async=y',
    'start-fast=y',
    'delta=y',
    'io-timeout=20',
    'db-timeout=60',
    ...input.repositories.flatMap((repository, i) => repositoryLines(i + 1, repository, input.credentials[i], config.retention)),
    ...(input.extraGlobal ?? []),
  ];
  const stanza = [
    `[${input.stanza}]`,
    line('pg1-path', server.dataDir),
    line('pg1-port', server.port),
    line('pg1-socket-path', server.socketDir),
    line('pg1-user', server.user),
  ];
  return `# Written by keelson ha-node; edits are overwritten.\n${global.join('\n')}\n\n${stanza.join('\n')}\n`;
}

/** Quotes one word for the shell PostgreSQL runs archive_command and restore_command with. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./=%-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function pgBackRestCommand(bin: string, conf: string, stanza: string, args: string[]): string {
  return [bin, `--config=${conf}`, `--stanza=${stanza}`, ...args].map(shellWord).join(' ');
}

/**
 * The settings every member runs with while backups are on. archive_mode=on (not always): only
 * the primary archives, a standby fetches from the archive when streaming cannot give it WAL.
 */
export function archiveParameters(bin: string, conf: string, stanza: string, archiveTimeout: number): Record<string, string | number> {
  return {
    archive_mode: 'on',
    archive_command: pgBackRestCommand(bin, conf, stanza, ['archive-push', '%p']),
    restore_command: pgBackRestCommand(bin, conf, stanza, ['archive-get', '%f', '%p']),
    archive_timeout: archiveTimeout,
  };
}
