import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import type { Logger } from '../../../lib/log.js';
import type { ParameterValue } from './conf.js';
import type { PeerTlsSettings } from './peer-tls.js';
import type { SettingsCatalog } from './settings-catalog.js';
import { removeStandbySignal, writeConfigFiles, writtenSyncStandbyNames } from './config-files.js';
import { parseLsn } from './lsn.js';
import { runTool, runToolOrThrow, type RunAs } from './runner.js';
import { stopBySignal } from './signal-stop.js';
import type { StandbySource } from './standby-source.js';
import { ToolActivity } from './tool-activity.js';
import type { DbState } from './state.js';
import { serverLogLinesSince, serverLogSize } from './server-log.js';
import { readServerStatus, type ServerStatus } from './status.js';

/** Bounds of one connection to the local server: a hung server answers neither (statement_timeout is enforced by the server, so a frozen one never applies it). */
export const probeConnectTimeoutMs = 3000;
export const probeQueryTimeoutMs = 6000;

export interface Credentials {
  username: string;
  password: string;
}

export interface PostgresSettings {
  name: string;
  scope: string;
  dataDir: string;
  binDir: string;
  listenAddress: string;
  /** Address other members use to reach this server. */
  connectHost: string;
  port: number;
  socketDir: string;
  superuser: Credentials;
  replication: Credentials;
  runAs?: RunAs;
  /** Local parameters (lowest precedence below the dynamic configuration's). */
  parameters: Record<string, ParameterValue>;
  /** TLS to the other members (replication, pg_basebackup, pg_rewind); plain connections when unset. */
  peerTls?: PeerTlsSettings;
}

export interface LeaderAddress {
  name: string;
  host: string;
  port: number;
  /** Set when this is the remote source of a standby cluster (the standby leader follows it). */
  source?: StandbySource;
}

/** Fields from pg_controldata that matter when the server is down. */
export interface ControlData {
  state: string;
  timeline: number;
  systemIdentifier: string;
  /** Start of the latest checkpoint record (after a clean stop: the shutdown checkpoint). */
  checkpointLocation?: number;
}

/**
 * One PostgreSQL data directory and its server: start/stop, promote, reload, its configuration
 * files and status. Creating a data directory (initialize.ts, clone.ts), pg_rewind (rewind.ts) and
 * replication slots (slots.ts) work on it from their own modules. Holds no HA policy; the loop
 * decides what to call.
 */
export class PostgresInstance {
  state: DbState = 'stopped';
  /** Dynamic-configuration parameters, applied on the next config write. */
  dynamicParameters: Record<string, ParameterValue> = {};
  /** The server's pg_settings as last read (undefined until it has run under this process). */
  settingsCatalog: SettingsCatalog | undefined;
  /** Parameters no configuration may override (WAL archiving while backups are on). */
  enforcedParameters: Record<string, ParameterValue> = {};
  /** db.pg_hba of the dynamic configuration (validated), applied on the next config write. */
  hbaLines: readonly string[] = [];
  /**
   * synchronous_standby_names of the primary, set by the HA loop in synchronous mode. Undefined
   * until known: then it is read back from the file we wrote last, because silently dropping it
   * (say after an ha-node restart) would release commits that no standby has confirmed.
   */
  syncStandbyNames: string | undefined;
  /** The tools running for this instance: liveness counts a long step in progress as alive. */
  readonly activity = new ToolActivity();
  private following: LeaderAddress | undefined | null = null;
  private readonly logFile: string;

  constructor(
    readonly settings: PostgresSettings,
    readonly log: Logger,
  ) {
    this.logFile = join(dirname(settings.dataDir), 'postgresql.log');
  }

  /** Path of a PostgreSQL program of this server's version. */
  tool(name: string): string {
    return join(this.settings.binDir, name);
  }

  /** The account the server and its tools run as (none: as ourselves). */
  get runAs(): RunAs | undefined {
    return this.settings.runAs;
  }

  isInitialized(): boolean {
    return existsSync(join(this.settings.dataDir, 'PG_VERSION'));
  }

  /** The postmaster PID when a live postmaster owns the data directory. */
  postmasterPid(): number | undefined {
    let pid: number;
    try {
      pid = Number(readFileSync(join(this.settings.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  isRunning(): boolean {
    return this.postmasterPid() !== undefined;
  }

  /** Creates the parent folders PostgreSQL needs, owned by the run-as account. */
  prepareDirectories(): void {
    for (const dir of [dirname(this.settings.dataDir), this.settings.socketDir]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (this.runAs) chownSync(dir, this.runAs.uid, this.runAs.gid);
    }
  }

  /** A new connection; `waitMs` bounds the connect and each query instead of the probe bounds. */
  async connect(database = 'postgres', waitMs?: number): Promise<pg.Client> {
    const client = new pg.Client({
      host: this.settings.socketDir,
      port: this.settings.port,
      user: this.settings.superuser.username,
      database,
      connectionTimeoutMillis: waitMs ?? probeConnectTimeoutMs,
      statement_timeout: 5000,
      query_timeout: waitMs ?? probeQueryTimeoutMs,
      application_name: 'keelson-ha-node',
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = await this.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Whether the server is in recovery, asked over a new connection that may wait `waitMs` to connect and as long to answer (the hang watch's heartbeat). */
  async inRecovery(waitMs: number): Promise<boolean> {
    const client = await this.connect('postgres', waitMs);
    try {
      const rows = (await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery')).rows;
      return rows[0]?.recovery !== false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async status(): Promise<ServerStatus> {
    const client = await this.connect();
    try {
      return await readServerStatus(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async controlData(): Promise<ControlData | undefined> {
    if (!this.isInitialized()) return undefined;
    const result = await runTool(this.tool('pg_controldata'), ['-D', this.settings.dataDir], { runAs: this.runAs, activity: this.activity, env: { LC_ALL: 'C' }, timeoutMs: 30_000 });
    if (result.code !== 0) return undefined;
    const field = (label: string): string => new RegExp(`^${label}:\\s*(.*)$`, 'm').exec(result.output)?.[1]?.trim() ?? '';
    return {
      state: field('Database cluster state'),
      timeline: Number(field("Latest checkpoint's TimeLineID")) || 0,
      systemIdentifier: field('Database system identifier'),
      checkpointLocation: parseLsn(field('Latest checkpoint location')),
    };
  }

  removeDataDirectory(): void {
    rmSync(this.settings.dataDir, { recursive: true, force: true });
  }

  // --- configuration -------------------------------------------------------------------

  /** Rewrites postgresql.conf, pg_hba.conf and the standby signal for the given role. */
  writeConfig(leader: LeaderAddress | undefined, asReplica = leader !== undefined): void {
    writeConfigFiles(this.settings, this.runAs, {
      parameters: [this.settings.parameters, this.dynamicParameters, this.enforcedParameters],
      hbaLines: this.hbaLines,
      leader,
      asReplica,
      syncStandbyNames: asReplica ? '' : this.currentSyncNames(),
    });
    this.following = asReplica ? (leader ?? undefined) : null;
  }

  private currentSyncNames(): string {
    this.syncStandbyNames ??= writtenSyncStandbyNames(this.settings.dataDir);
    return this.syncStandbyNames;
  }

  /** Changes synchronous_standby_names on a running primary (reload, no restart). */
  async setSyncStandbyNames(value: string): Promise<void> {
    this.syncStandbyNames = value;
    this.writeConfig(undefined, false);
    await this.reload();
  }

  /** The leader a running replica was last configured to follow (null when configured as primary). */
  followingLeader(): LeaderAddress | undefined | null {
    return this.following;
  }

  /** Points a running replica at a new leader with a reload (primary_conninfo is reloadable since PG 13). */
  async follow(leader: LeaderAddress | undefined): Promise<void> {
    this.writeConfig(leader, true);
    await this.reload();
  }

  async reload(): Promise<void> {
    await runToolOrThrow(this.tool('pg_ctl'), ['-D', this.settings.dataDir, 'reload', '-s'], { runAs: this.runAs, activity: this.activity, timeoutMs: 30_000 });
  }

  // --- start / stop --------------------------------------------------------------------

  /** Starts the server with the files already written; waits until it accepts connections. */
  async start(timeoutSeconds = 60): Promise<boolean> {
    this.state = 'starting';
    const logFrom = serverLogSize(this.logFile);
    const result = await runTool(this.tool('pg_ctl'), ['-D', this.settings.dataDir, '-l', this.logFile, '-w', '-t', String(timeoutSeconds), 'start'], {
      runAs: this.runAs,
      activity: this.activity,
      timeoutMs: (timeoutSeconds + 10) * 1000,
    });
    if (result.code === 0) {
      this.state = 'running';
      return true;
    }
    if (this.isRunning()) {
      // pg_ctl stopped waiting, the server did not: crash recovery or WAL replay still running.
      this.log.warn({ waitedSeconds: timeoutSeconds }, 'PostgreSQL is still starting (recovery in progress)');
      this.state = 'starting';
    } else {
      // pg_ctl only says to examine the log: the server's own reasons go into this line (kubectl logs shows them).
      this.log.error({ output: result.output.slice(-500), serverLog: serverLogLinesSince(this.logFile, logFrom).join('\n') }, 'PostgreSQL did not start');
      this.state = 'start_failed';
    }
    return false;
  }

  async stop(mode: 'fast' | 'immediate' | 'smart' = 'fast', timeoutSeconds = 60): Promise<boolean> {
    if (!this.isRunning()) {
      this.state = 'stopped';
      return true;
    }
    this.state = 'stopping';
    const pid = this.postmasterPid();
    // Liveness counts the wait as progress, as it does a running pg_ctl.
    this.activity.started(pid);
    const signalled = pid === undefined ? undefined : await stopBySignal(this.settings.dataDir, pid, mode, timeoutSeconds * 1000).finally(() => this.activity.finished(pid));
    if (signalled === undefined) {
      const result = await runTool(this.tool('pg_ctl'), ['-D', this.settings.dataDir, '-m', mode, '-w', '-t', String(timeoutSeconds), 'stop'], {
        runAs: this.runAs,
        activity: this.activity,
        timeoutMs: (timeoutSeconds + 10) * 1000,
      });
      if (result.code !== 0 && this.isRunning()) {
        this.log.error({ output: result.output.slice(-300), mode }, 'PostgreSQL did not stop');
        this.state = 'stop_failed';
        return false;
      }
    } else if (!signalled && this.isRunning()) {
      this.log.error({ mode, waitedSeconds: timeoutSeconds }, 'PostgreSQL did not stop');
      this.state = 'stop_failed';
      return false;
    }
    this.state = 'stopped';
    return true;
  }

  /**
   * Promotes through SQL and polls every 20 ms (pg_ctl promote -w polls every 100 ms, and every
   * millisecond here is write downtime); falls back to pg_ctl when SQL is not available.
   */
  async promote(): Promise<void> {
    let client: pg.Client | undefined;
    try {
      client = await this.connect();
      await client.query('SELECT pg_promote(false)');
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
        if (rows[0]?.r === false) break;
        if (Date.now() > deadline) throw new Error('promotion did not finish within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'SQL promotion failed; using pg_ctl promote');
      await runToolOrThrow(this.tool('pg_ctl'), ['-D', this.settings.dataDir, '-w', '-t', '60', 'promote'], { runAs: this.runAs, activity: this.activity, timeoutMs: 70_000 });
    } finally {
      await client?.end().catch(() => undefined);
    }
    const followedRemote = this.following?.source !== undefined;
    this.following = null;
    removeStandbySignal(this.settings.dataDir);
    // A promoted standby leader drops the remote source's settings (restore_command, delay) for its next start.
    if (followedRemote) this.writeConfig(undefined, false);
  }

  dataDirectoryEmpty(): boolean {
    return !existsSync(this.settings.dataDir) || readdirSync(this.settings.dataDir).length === 0;
  }
}
