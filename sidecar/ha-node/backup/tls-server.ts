/**
 * Backups taken on a standby. pgBackRest runs on the standby with `backup-standby`: it copies the
 * files from the local standby and reaches the primary (pg_backup_start/stop, the archive check)
 * through the primary's `pgbackrest server` over mutual TLS. Every member runs that server with a
 * certificate it issues itself at start, for its pod IP, from the cluster CA; the client
 * certificate's name is what the servers authorize for the stanza.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { pg } from '../../../lib/pg.js';
import { issueCertificate } from '../../../lib/tls-certificates.js';
import type { Logger } from '../../../lib/log.js';
import { writePrivateFile, type RunAs } from '../postgres/runner.js';
import type { BackupPaths, LocalServer } from './conf.js';
import type { TlsServerConfig } from '../../../api/ha-node/backup-settings.js';

/** The client certificate's name: the servers accept it for this cluster's stanza only. */
export const backupClientName = 'keelson-backup';

export interface MemberTlsFiles {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

export function memberTlsFiles(paths: BackupPaths): MemberTlsFiles {
  const dir = join(paths.root, 'tls');
  return {
    dir,
    ca: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
  };
}

/**
 * Issues this member's server (its pod IP) and client certificates from the cluster CA (the
 * first certificate of the mounted bundle signs), and copies the whole bundle as what it trusts.
 */
export function issueMemberCertificates(tls: TlsServerConfig, podIp: string, files: MemberTlsFiles, runAs: RunAs | undefined): void {
  const read = (what: string, file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`cannot read the backup CA ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
    }
  };
  const ca = { cert: read('certificate', tls.caFile), key: read('key', tls.caKeyFile) };
  const server = issueCertificate(ca, podIp);
  const client = issueCertificate(ca, backupClientName);
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  if (runAs) chownSync(files.dir, runAs.uid, runAs.gid);
  writePrivateFile(files.ca, ca.cert, runAs);
  writePrivateFile(files.serverCert, server.cert, runAs);
  writePrivateFile(files.serverKey, server.key, runAs);
  writePrivateFile(files.clientCert, client.cert, runAs);
  writePrivateFile(files.clientKey, client.key, runAs);
}

/** The [global] lines of the member's TLS server; pure. */
export function tlsServerLines(tls: TlsServerConfig, podIp: string, files: MemberTlsFiles, stanza: string): string[] {
  return [
    `tls-server-address=${podIp}`,
    `tls-server-port=${tls.port}`,
    `tls-server-cert-file=${files.serverCert}`,
    `tls-server-key-file=${files.serverKey}`,
    `tls-server-ca-file=${files.ca}`,
    `tls-server-auth=${backupClientName}=${stanza}`,
  ];
}

/** Where the standby finds the primary: its pod IP, PostgreSQL port, data and socket directories. */
export interface PrimarySource {
  host: string;
  port: number;
  dataDir: string;
  socketDir: string;
}

/**
 * The options of `pgbackrest backup` on a standby: the primary as pg2 over TLS (pg1 is the local
 * standby from the configuration file); pure. The account is the same on every member.
 */
export function standbyBackupArgs(primary: PrimarySource, tls: TlsServerConfig, files: MemberTlsFiles, local: LocalServer): string[] {
  return [
    '--backup-standby',
    `--pg2-host=${primary.host}`,
    '--pg2-host-type=tls',
    `--pg2-host-port=${tls.port}`,
    `--pg2-host-cert-file=${files.clientCert}`,
    `--pg2-host-key-file=${files.clientKey}`,
    `--pg2-host-ca-file=${files.ca}`,
    `--pg2-path=${primary.dataDir}`,
    `--pg2-port=${primary.port}`,
    `--pg2-socket-path=${primary.socketDir}`,
    `--pg2-user=${local.user}`,
  ];
}

/**
 * The primary's data and socket directories, asked of the primary itself (pgBackRest must be
 * given them for the remote): members of one cluster share a layout, but nothing promises it.
 * `ssl`: the primary verified as peers are (peer-tls.ts); it takes no remote session without TLS.
 */
export async function primaryDirectories(
  host: string,
  port: number,
  superuser: { username: string; password: string },
  ssl?: ConnectionOptions,
): Promise<{ dataDir: string; socketDir: string }> {
  const client = new pg.Client({
    host,
    port,
    ...(ssl ? { ssl } : {}),
    user: superuser.username,
    password: superuser.password,
    database: 'postgres',
    connectionTimeoutMillis: 5000,
    query_timeout: 5000,
    application_name: 'keelson-backup',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ data: string; sockets: string }>(
      "SELECT current_setting('data_directory') AS data, current_setting('unix_socket_directories') AS sockets",
    );
    const socketDir = rows[0]!.sockets.split(',')[0]!.trim();
    if (!socketDir) throw new Error('the primary listens on no Unix socket');
    return { dataDir: rows[0]!.data, socketDir };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs `pgbackrest server` for the life of ha-node, started again after an exit (with a pause). */
export class PgBackRestServer {
  private child: ChildProcess | undefined;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private restarting = false;

  constructor(
    private readonly bin: string,
    private readonly conf: string,
    private readonly runAs: RunAs | undefined,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.stopped || this.child) return;
    const child = spawn(this.bin, [`--config=${this.conf}`, 'server'], {
      uid: this.runAs?.uid,
      gid: this.runAs?.gid,
      env: { ...process.env, ...(this.runAs ? { HOME: '/tmp', USER: this.runAs.user } : {}) },
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: '/tmp',
    });
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    child.on('error', (error) => this.logger.error({ err: error.message }, 'cannot start the pgBackRest TLS server'));
    child.on('exit', (code, signal) => {
      this.child = undefined;
      if (this.stopped) return;
      if (this.restarting) {
        this.restarting = false;
        this.start();
        return;
      }
      this.logger.warn({ code, signal, stderr: stderr.trim().split('\n').at(-1) }, 'pgBackRest TLS server exited; starting it again');
      this.restartTimer = setTimeout(() => this.start(), 2000);
    });
    this.logger.info({ pid: child.pid }, 'pgBackRest TLS server started');
  }

  /**
   * Starts the server again (it reads its certificates only at start). Connections already
   * accepted are served by their own forked processes, which a SIGTERM to the listener leaves be.
   */
  restart(): void {
    if (this.stopped) return;
    if (!this.child) {
      this.start();
      return;
    }
    this.restarting = true;
    this.child.kill('SIGTERM');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}
