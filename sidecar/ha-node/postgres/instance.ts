import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import type { Logger } from '../../../lib/log.js';
import { buildServerConf, connInfo, slotNameFor, type ParameterValue } from './conf.js';
import { buildHba } from './hba.js';
import { parseLsn } from './lsn.js';
import { runTool, runToolOrThrow, writePrivateFile, type RunAs } from './runner.js';
import { stopBySignal } from './signal-stop.js';
import { standbySourceSettings, type StandbySource } from './standby-source.js';
import { ToolActivity } from './tool-activity.js';
import type { DbState } from './state.js';
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
 * One PostgreSQL data directory and its server: initdb, clone, start/stop, promote, rewind,
 * configuration files and status. Holds no HA policy; the loop decides what to call.
 */
export class PostgresInstance {
  state: DbState = 'stopped';
  /** Dynamic-configuration parameters, applied on the next config write. */
  dynamicParameters: Record<string, ParameterValue> = {};
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
    private readonly logger: Logger,
  ) {
    this.logFile = join(dirname(settings.dataDir), 'postgresql.log');
  }

  private bin(tool: string): string {
    return join(this.settings.binDir, tool);
  }

  private get runAs(): RunAs | undefined {
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

  async connect(database = 'postgres'): Promise<pg.Client> {
    const client = new pg.Client({
      host: this.settings.socketDir,
      port: this.settings.port,
      user: this.settings.superuser.username,
      database,
      connectionTimeoutMillis: probeConnectTimeoutMs,
      statement_timeout: 5000,
      query_timeout: probeQueryTimeoutMs,
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
    const result = await runTool(this.bin('pg_controldata'), ['-D', this.settings.dataDir], { runAs: this.runAs, activity: this.activity, env: { LC_ALL: 'C' }, timeoutMs: 30_000 });
    if (result.code !== 0) return undefined;
    const field = (label: string): string => new RegExp(`^${label}:\\s*(.*)$`, 'm').exec(result.output)?.[1]?.trim() ?? '';
    return {
      state: field('Database cluster state'),
      timeline: Number(field("Latest checkpoint's TimeLineID")) || 0,
      systemIdentifier: field('Database system identifier'),
      checkpointLocation: parseLsn(field('Latest checkpoint location')),
    };
  }

  // --- bootstrap -----------------------------------------------------------------------

  async initdb(): Promise<void> {
    this.prepareDirectories();
    this.state = 'initdb';
    const pwFile = join(dirname(this.settings.dataDir), '.pwfile');
    writePrivateFile(pwFile, `${this.settings.superuser.password}\n`, this.runAs);
    try {
      await runToolOrThrow(
        this.bin('initdb'),
        ['-D', this.settings.dataDir, '-U', this.settings.superuser.username, `--pwfile=${pwFile}`, '-A', 'scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C', '-k', '--no-sync'],
        { runAs: this.runAs, activity: this.activity, timeoutMs: 120_000 },
      );
    } catch (error) {
      this.state = 'initdb_failed';
      throw error;
    } finally {
      rmSync(pwFile, { force: true });
    }
    this.writeConfig(undefined);
  }

  /**
   * Creates the replication role once the new primary accepts connections (the application's:
   * app-owner.ts), and sets the superuser's password: a cluster restored from a backup carries
   * the source cluster's.
   */
  async createRoles(): Promise<void> {
    const { username, password } = this.settings.replication;
    const client = await this.connect();
    try {
      const superuser = this.settings.superuser;
      await client.query(`ALTER ROLE ${client.escapeIdentifier(superuser.username)} WITH PASSWORD ${client.escapeLiteral(superuser.password)}`);
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username]);
      const quotedName = client.escapeIdentifier(username);
      const quotedPassword = client.escapeLiteral(password);
      if (exists.rowCount === 0) await client.query(`CREATE ROLE ${quotedName} WITH LOGIN REPLICATION PASSWORD ${quotedPassword}`);
      else await client.query(`ALTER ROLE ${quotedName} WITH LOGIN REPLICATION PASSWORD ${quotedPassword}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Clones the leader with pg_basebackup into a side folder and swaps it in only when the copy
   * is complete, so a failed clone never costs the data directory we had.
   */
  async basebackup(from: LeaderAddress): Promise<void> {
    this.prepareDirectories();
    const previousState = this.state;
    this.state = 'creating_replica';
    const target = `${this.settings.dataDir}.clone`;
    rmSync(target, { recursive: true, force: true });
    const conn = connInfo({ host: from.host, port: from.port, user: this.settings.replication.username, password: this.settings.replication.password, applicationName: this.settings.name });
    try {
      await runToolOrThrow(this.bin('pg_basebackup'), ['-D', target, '-d', conn, '-X', 'stream', '-c', 'fast', '--no-sync'], { runAs: this.runAs, activity: this.activity, timeoutMs: 600_000 });
    } catch (error) {
      rmSync(target, { recursive: true, force: true });
      this.state = previousState === 'creating_replica' ? 'stopped' : previousState;
      throw error;
    }
    rmSync(this.settings.dataDir, { recursive: true, force: true });
    renameSync(target, this.settings.dataDir);
    this.state = 'stopped';
  }

  removeDataDirectory(): void {
    rmSync(this.settings.dataDir, { recursive: true, force: true });
  }

  // --- configuration -------------------------------------------------------------------

  /** Rewrites postgresql.conf, pg_hba.conf and the standby signal for the given role. */
  writeConfig(leader: LeaderAddress | undefined, asReplica = leader !== undefined): void {
    const source = leader?.source;
    const streamsFrom = leader && (!source || source.host !== undefined) ? leader : undefined;
    const standby = asReplica
      ? {
          primaryConninfo: streamsFrom
            ? connInfo({ host: streamsFrom.host, port: streamsFrom.port, user: this.settings.replication.username, password: this.settings.replication.password, applicationName: this.settings.name })
            : undefined,
          // The remote source's slot is the one its owner created for this cluster; ours are per member.
          slotName: source ? source.primary_slot_name : leader ? slotNameFor(this.settings.name) : undefined,
          settings: source ? standbySourceSettings(source) : undefined,
        }
      : undefined;
    const conf = buildServerConf({
      listenAddress: this.settings.listenAddress,
      port: this.settings.port,
      socketDir: this.settings.socketDir,
      clusterName: this.settings.scope,
      parameters: { ...this.settings.parameters, ...this.dynamicParameters, ...this.enforcedParameters, synchronous_standby_names: asReplica ? '' : this.currentSyncNames() },
      standby,
    });
    writePrivateFile(join(this.settings.dataDir, 'postgresql.conf'), conf, this.runAs);
    writePrivateFile(join(this.settings.dataDir, 'pg_hba.conf'), buildHba({ superuser: this.settings.superuser.username, replication: this.settings.replication.username, userLines: this.hbaLines }), this.runAs);
    // pg_basebackup and pg_rewind copy the source's auto.conf; ha-node owns every setting itself.
    writePrivateFile(join(this.settings.dataDir, 'postgresql.auto.conf'), '', this.runAs);
    const signal = join(this.settings.dataDir, 'standby.signal');
    if (asReplica) writePrivateFile(signal, '', this.runAs);
    else if (existsSync(signal)) unlinkSync(signal);
    this.following = asReplica ? (leader ?? undefined) : null;
  }

  private currentSyncNames(): string {
    if (this.syncStandbyNames === undefined) {
      try {
        const text = readFileSync(join(this.settings.dataDir, 'postgresql.conf'), 'utf8');
        const match = /^synchronous_standby_names = '((?:[^']|'')*)'$/m.exec(text);
        this.syncStandbyNames = match ? match[1]!.replace(/''/g, "'") : '';
      } catch {
        this.syncStandbyNames = '';
      }
    }
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
    await runToolOrThrow(this.bin('pg_ctl'), ['-D', this.settings.dataDir, 'reload', '-s'], { runAs: this.runAs, activity: this.activity, timeoutMs: 30_000 });
  }

  // --- start / stop --------------------------------------------------------------------

  /** Starts the server with the files already written; waits until it accepts connections. */
  async start(timeoutSeconds = 60): Promise<boolean> {
    this.state = 'starting';
    const result = await runTool(this.bin('pg_ctl'), ['-D', this.settings.dataDir, '-l', this.logFile, '-w', '-t', String(timeoutSeconds), 'start'], {
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
      this.logger.warn({ waitedSeconds: timeoutSeconds }, 'PostgreSQL is still starting (recovery in progress)');
      this.state = 'starting';
    } else {
      this.logger.error({ output: result.output.slice(-500) }, 'PostgreSQL did not start');
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
      const result = await runTool(this.bin('pg_ctl'), ['-D', this.settings.dataDir, '-m', mode, '-w', '-t', String(timeoutSeconds), 'stop'], {
        runAs: this.runAs,
        activity: this.activity,
        timeoutMs: (timeoutSeconds + 10) * 1000,
      });
      if (result.code !== 0 && this.isRunning()) {
        this.logger.error({ output: result.output.slice(-300), mode }, 'PostgreSQL did not stop');
        this.state = 'stop_failed';
        return false;
      }
    } else if (!signalled && this.isRunning()) {
      this.logger.error({ mode, waitedSeconds: timeoutSeconds }, 'PostgreSQL did not stop');
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
      this.logger.warn({ err: (error as Error).message }, 'SQL promotion failed; using pg_ctl promote');
      await runToolOrThrow(this.bin('pg_ctl'), ['-D', this.settings.dataDir, '-w', '-t', '60', 'promote'], { runAs: this.runAs, activity: this.activity, timeoutMs: 70_000 });
    } finally {
      await client?.end().catch(() => undefined);
    }
    const followedRemote = this.following?.source !== undefined;
    this.following = null;
    const signal = join(this.settings.dataDir, 'standby.signal');
    if (existsSync(signal)) unlinkSync(signal);
    // A promoted standby leader drops the remote source's settings (restore_command, delay) for its next start.
    if (followedRemote) this.writeConfig(undefined, false);
  }

  /** Brings a crashed data directory to a clean shutdown state (pg_rewind refuses otherwise). */
  async crashRecoverSingleUser(): Promise<void> {
    const result = await runTool(this.bin('postgres'), ['--single', '-D', this.settings.dataDir, '-c', 'archive_mode=off', 'postgres'], {
      runAs: this.runAs,
      activity: this.activity,
      stdin: '',
      timeoutMs: 300_000,
    });
    if (result.code !== 0) throw new Error(`single-user crash recovery failed: ${result.output.slice(-300)}`);
  }

  /** pg_rewind against the leader; the server must be stopped. Returns false when it failed. */
  async rewind(leader: LeaderAddress): Promise<boolean> {
    const control = await this.controlData();
    if (control && control.state === 'in production') {
      this.logger.info('running single-user crash recovery before pg_rewind');
      this.writeConfig(undefined, false);
      await this.crashRecoverSingleUser();
    }
    const source = connInfo({ host: leader.host, port: leader.port, user: this.settings.superuser.username, password: this.settings.superuser.password, applicationName: `${this.settings.name}-rewind` }, 'postgres');
    const result = await runTool(this.bin('pg_rewind'), ['-D', this.settings.dataDir, `--source-server=${source}`, '--no-sync'], { runAs: this.runAs, activity: this.activity, timeoutMs: 600_000 });
    if (result.code !== 0) {
      this.logger.error({ output: result.output.slice(-400) }, 'pg_rewind failed');
      return false;
    }
    this.logger.info({ output: result.output.slice(-200) }, 'pg_rewind finished');
    return true;
  }

  // --- replication slots (leader side) ------------------------------------------------

  /** Makes the physical slots match the other members; returns their positions for the DCS. */
  async syncSlots(members: string[]): Promise<Record<string, number>> {
    const wanted = new Set(members.filter((m) => m !== this.settings.name).map(slotNameFor));
    const rows = await this.query<{ slot_name: string; active: boolean; restart_lsn: string | null }>(
      "SELECT slot_name, active, restart_lsn::text FROM pg_replication_slots WHERE slot_type = 'physical'",
    );
    const existing = new Set(rows.map((r) => r.slot_name));
    for (const name of wanted) {
      if (!existing.has(name)) await this.query('SELECT pg_create_physical_replication_slot($1, true)', [name]);
    }
    for (const row of rows) {
      if (!wanted.has(row.slot_name) && !row.active) await this.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]);
    }
    const positions: Record<string, number> = {};
    for (const row of rows) {
      if (wanted.has(row.slot_name) && row.restart_lsn) {
        const [hi, lo] = row.restart_lsn.split('/');
        positions[row.slot_name] = parseInt(hi ?? '0', 16) * 0x1_0000_0000 + parseInt(lo ?? '0', 16);
      }
    }
    return positions;
  }

  /** Drops every physical slot (a freshly promoted replica may carry copies from its clone). */
  async dropInactiveSlots(): Promise<void> {
    await this.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_type = 'physical' AND NOT active");
  }

  dataDirectoryEmpty(): boolean {
    return !existsSync(this.settings.dataDir) || readdirSync(this.settings.dataDir).length === 0;
  }
}
