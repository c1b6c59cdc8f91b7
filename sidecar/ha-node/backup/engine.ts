/**
 * The pgBackRest commands ha-node runs, as the PostgreSQL account. Writes the configuration files
 * (credentials read from their mounted files on every write, so a rotated Secret is followed).
 */
import { chownSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { runTool, writePrivateFile, type RunAs, type RunResult } from '../postgres/runner.js';
import { archiveParameters, backupPaths, pgBackRestCommand, renderPgBackRestConf, type BackupPaths, type LocalServer, type S3Credentials } from './conf.js';
import { parseInfo, type StanzaInfo } from './info.js';
import type { ToolActivity } from '../postgres/tool-activity.js';
import type { BackupConfig, Repository } from '../../../api/ha-node/backup-settings.js';
import { memberTlsFiles, standbyBackupArgs, tlsServerLines, type MemberTlsFiles, type PrimarySource } from './tls-server.js';

export type BackupType = 'full' | 'diff' | 'incr';

export interface EngineOptions {
  config: BackupConfig;
  server: LocalServer;
  /** The pgbackrest executable (default: from PATH). */
  bin?: string;
  runAs?: RunAs;
  /** Liveness counts a long restore or backup in progress as alive. */
  activity?: Pick<ToolActivity, 'started' | 'finished'>;
  /** This member's pod IP: where its TLS server listens (with config.tlsServer). */
  podIp?: string;
}

/** A pgBackRest command that failed: the message is pgBackRest's own error line (never credentials). */
export class PgBackRestError extends Error {
  constructor(
    readonly command: string,
    readonly code: number | null,
    readonly detail: string,
  ) {
    super(`pgbackrest ${command} failed (exit ${code}): ${detail}`);
    this.name = 'PgBackRestError';
  }
}

/** The first ERROR line and its hints: pgBackRest prints headers and request dumps after them. */
export function errorSummary(output: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => /ERROR: \[\d+\]/.test(l));
  if (start < 0) return output.slice(-300);
  const picked = [lines[start]!.replace(/^.*?(ERROR: )/, '$1')];
  for (const l of lines.slice(start + 1, start + 6)) if (/^\s+HINT:/.test(l)) picked.push(l.trim());
  // Why a host was passed over ("unable to find primary cluster" says only that one was).
  for (const l of lines.slice(0, start)) if (/WARN: unable to check pg\d/.test(l)) picked.push(l.replace(/^.*?(WARN: )/, '$1').trim());
  return picked.join(' ').slice(0, 800);
}

function readCredentials(repository: Repository): S3Credentials | undefined {
  if (repository.kind !== 's3') return undefined;
  const read = (what: string, file: string): string => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new Error(`cannot read the S3 ${what} file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
    }
  };
  return { key: read('access key', repository.keyFile), secretKey: read('secret key', repository.secretKeyFile) };
}

export class PgBackRest {
  readonly paths: BackupPaths;
  readonly bin: string;

  constructor(private readonly options: EngineOptions) {
    this.paths = backupPaths(options.server.dataDir);
    this.bin = options.bin ?? 'pgbackrest';
  }

  get config(): BackupConfig {
    return this.options.config;
  }

  get stanza(): string {
    return this.options.config.stanza;
  }

  get dataDir(): string {
    return this.options.server.dataDir;
  }

  /** postgresql.conf settings for archiving into, and fetching from, this cluster's stanza. */
  archiveParameters(): Record<string, string | number> {
    return archiveParameters(this.bin, this.paths.conf, this.stanza, this.config.archiveTimeout);
  }

  /** Writes this cluster's pgbackrest.conf and the folders pgBackRest uses. */
  writeConfig(): void {
    // A filesystem repository's folder for this cluster may not exist yet on a fresh volume.
    const posix = this.options.config.repositories.flatMap((r) => (r.kind === 'posix' ? [r.path] : []));
    for (const dir of [this.paths.root, this.paths.spool, this.paths.log, this.paths.lock, ...posix]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (this.options.runAs) chownSync(dir, this.options.runAs.uid, this.options.runAs.gid);
    }
    const { config, server } = this.options;
    writePrivateFile(
      this.paths.conf,
      renderPgBackRestConf({
        stanza: config.stanza,
        repositories: config.repositories,
        credentials: config.repositories.map(readCredentials),
        config,
        server,
        paths: this.paths,
        extraGlobal: this.tlsServerLines(),
      }),
      this.options.runAs,
    );
  }

  /** The TLS server's lines when backups may run on a standby (and the pod IP is known). */
  private tlsServerLines(): string[] {
    const tls = this.options.config.tlsServer;
    return tls && this.options.podIp ? tlsServerLines(tls, this.options.podIp, this.tlsFiles, this.stanza) : [];
  }

  get tlsFiles(): MemberTlsFiles {
    return memberTlsFiles(this.paths);
  }

  get runAs(): RunAs | undefined {
    return this.options.runAs;
  }

  get podIp(): string | undefined {
    return this.options.podIp;
  }

  /** The restore source's configuration, only while restoring: it holds the source's credentials. */
  writeSourceConfig(): void {
    const { config, server } = this.options;
    const source = config.recovery;
    if (source) {
      writePrivateFile(
        this.paths.sourceConf,
        renderPgBackRestConf({
          stanza: source.stanza,
          repositories: [source.repository],
          credentials: [readCredentials(source.repository)],
          config,
          server,
          paths: this.paths,
        }),
        this.options.runAs,
      );
    }
  }

  removeSourceConfig(): void {
    rmSync(this.paths.sourceConf, { force: true });
  }

  async run(args: string[], options: { source?: boolean; timeoutMs?: number } = {}): Promise<RunResult> {
    const conf = options.source ? this.paths.sourceConf : this.paths.conf;
    const stanza = options.source ? this.config.recovery!.stanza : this.stanza;
    return runTool(this.bin, [`--config=${conf}`, `--stanza=${stanza}`, ...args], {
      runAs: this.options.runAs,
      activity: this.options.activity,
      timeoutMs: options.timeoutMs ?? 120_000,
    });
  }

  private async runOrThrow(command: string, args: string[], options: { source?: boolean; timeoutMs?: number } = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0) throw new PgBackRestError(command, result.code, errorSummary(result.output));
    return result.output;
  }

  /** Creates the stanza in every repository; a stanza that exists for this database is fine. */
  async stanzaCreate(): Promise<void> {
    await this.runOrThrow('stanza-create', ['stanza-create']);
  }

  /** Checks the configuration and that a WAL switch reaches every repository. */
  async check(): Promise<void> {
    await this.runOrThrow('check', ['check'], { timeoutMs: 180_000 });
  }

  /** A backup of this member, or, given the primary, of this standby with the primary reached over TLS. */
  async backup(type: BackupType, repository = 1, primary?: PrimarySource): Promise<void> {
    const tls = this.options.config.tlsServer;
    if (primary && !tls) throw new Error('a backup on a standby needs the TLS server (spec.backup.target prefer-standby)');
    const fromStandby = primary && tls ? standbyBackupArgs(primary, tls, this.tlsFiles, this.options.server) : [];
    await this.runOrThrow('backup', ['backup', `--type=${type}`, `--repo=${repository}`, ...fromStandby], { timeoutMs: 6 * 3600_000 });
  }

  async info(options: { source?: boolean } = {}): Promise<StanzaInfo> {
    const output = await this.runOrThrow('info', ['info', '--output=json'], { ...options, timeoutMs: 60_000 });
    return parseInfo(output, options.source ? this.config.recovery!.stanza : this.stanza);
  }

  /** Restores the source's backup into the (empty) data directory; recovery settings are the caller's. */
  async restore(backupLabel: string | undefined): Promise<void> {
    const args = ['restore', '--type=none', `--pg1-path=${this.options.server.dataDir}`];
    if (backupLabel) args.push(`--set=${backupLabel}`);
    await this.runOrThrow('restore', args, { source: true, timeoutMs: 6 * 3600_000 });
  }

  /**
   * restore_command reading the source's archive (used until the restored cluster promotes), or
   * this cluster's own. `prefetch` keeps pgBackRest's asynchronous archive-get (a queue fetched
   * ahead in parallel: fast over a long replay); without it each segment is fetched when asked,
   * which spares the async process's start (about 0.4 s, twice) when only a few segments replay.
   */
  restoreCommand(options: { source?: boolean; prefetch: boolean; pgPath?: string }): string {
    const conf = options.source ? this.paths.sourceConf : this.paths.conf;
    const stanza = options.source ? this.config.recovery!.stanza : this.stanza;
    // archive-get checks that PostgreSQL runs in pg1-path: a data directory elsewhere must say so.
    const path = options.pgPath ? [`--pg1-path=${options.pgPath}`] : [];
    return pgBackRestCommand(this.bin, conf, stanza, [...path, ...(options.prefetch ? [] : ['--no-archive-async']), 'archive-get', '%f', '%p']);
  }
}
