import { HaNodePaths, Ports } from '../lib/ports.js';

/**
 * The few ha-node REST calls the operator makes (spec/ha-node-api.md): cluster view, dynamic
 * configuration, switchover and restart. Short timeouts: a slow member must not stall a reconcile.
 */
export interface HaClusterMember {
  name: string;
  role: string;
  state?: string;
  /** The address the member's ha-node published (its pod's IP when it wrote the record). */
  host?: string;
  timeline?: number;
  lag?: number | string;
  system_identifier?: string;
  /** The member reported a parameter change that needs a restart (its own record, in GET /cluster). */
  pending_restart?: boolean;
  /** Standby leader: the source's timeline and the bytes its replay is behind the source's WAL end. */
  source_timeline?: number;
  source_lag?: number;
  /** A primary demoted into a standby leader. */
  standby_demotion?: HaDemotion;
  /** Usage of its volumes (used bytes rounded up to 1 % of the capacity). */
  volumes?: HaVolume[];
}

export interface HaVolume {
  volume: 'data' | 'wal';
  capacity_bytes: number;
  used_bytes: number;
  free_bytes: number;
  full?: boolean;
}

/** What ha-node records when it demotes a primary (standby_demotion). */
export interface HaDemotion {
  database_system_identifier?: string;
  system_identifier?: string;
  timeline: number;
  checkpoint_location: number;
  checkpoint_lsn: string;
  at: string;
}

/** The node document (GET /) as far as the operator reads it. */
export interface HaNodeState {
  role?: string;
  state?: string;
  pending_restart?: boolean;
  timeline?: number;
  xlog?: { location?: number; replayed_location?: number; received_location?: number };
  standby_demotion?: HaDemotion;
}

/** What GET /backup answers (sidecar/ha-node/backup/keeper.ts), as far as the operator reads it. */
export interface HaBackupSet {
  label: string;
  type: string;
  repository?: number;
  startedAt?: string;
  stoppedAt: string;
  lsnStart?: string;
  lsnStop?: string;
  timeline?: number;
  systemIdentifier?: string;
  sizeBytes?: number;
  repoSizeBytes?: number;
  error?: boolean;
}

export interface HaBackupStatus {
  stanzaReady?: boolean;
  archive?: { ok: boolean; message: string; at: string };
  /** Completed WAL segments waiting for the archiver (while the server runs). */
  archivePending?: { segments: number; oldestAgeSeconds: number };
  running?: { type: string; startedAt: string };
  lastBackup?: { ok: boolean; message: string; at: string; type: string; startedAt?: string; set?: HaBackupSet };
  restore?: { ok: boolean; message: string; at: string };
  info?: { backups?: HaBackupSet[]; repositories?: { repository: number; code: number; message: string }[] };
  infoError?: string;
}

export interface HaNodeResult {
  status: number;
  body: string;
}

export interface HaNodeCredentials {
  username: string;
  password: string;
}

/** How long the operator waits for a switchover's answer before it counts the call as failed. */
const switchoverTimeoutMs = 60_000;

/** One pooler as a member lists it (GET /poolers); `readOnly` for the read-only pooler's. */
export interface PoolerListing {
  answered: boolean;
  paused?: boolean;
  reachable?: boolean;
  readOnly?: boolean;
  target?: { host: string; port: number };
}

export class HaNodeClient {
  constructor(
    private readonly timeoutMs = 3_000,
    private readonly port: number = Ports.haNodeApi,
    /** Basic-auth credentials for the mutating endpoints, by host (set per cluster before calls). */
    private readonly credentials = new Map<string, HaNodeCredentials>(),
  ) {}

  /** Remembers the API credentials to present to these hosts (the cluster's pods). */
  useCredentials(hosts: string[], credentials: HaNodeCredentials | undefined): void {
    for (const host of hosts) {
      if (credentials) this.credentials.set(host, credentials);
      else this.credentials.delete(host);
    }
  }

  private url(host: string, path: string): string {
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.port}${path}`;
  }

  private async call(host: string, method: string, path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<HaNodeResult> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    const credentials = this.credentials.get(host);
    if (credentials) headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    const response = await fetch(this.url(host, path), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: await response.text() };
  }

  async cluster(host: string): Promise<HaClusterMember[]> {
    const result = await this.call(host, 'GET', HaNodePaths.cluster);
    if (result.status !== 200) throw new Error(`ha-node ${host} /cluster answered ${result.status}`);
    const parsed = JSON.parse(result.body) as { members?: HaClusterMember[] };
    return Array.isArray(parsed.members) ? parsed.members : [];
  }

  /** The cluster's poolers as the member finds them (GET /poolers). */
  async poolers(host: string): Promise<PoolerListing[]> {
    const result = await this.call(host, 'GET', HaNodePaths.poolers);
    if (result.status !== 200) throw new Error(`ha-node ${host} /poolers answered ${result.status}`);
    const parsed = JSON.parse(result.body) as { poolers?: PoolerListing[] };
    return Array.isArray(parsed.poolers) ? parsed.poolers : [];
  }

  /** The node state document (GET /): role, state, pending_restart. */
  async nodeState(host: string): Promise<HaNodeState> {
    const result = await this.call(host, 'GET', HaNodePaths.node);
    return JSON.parse(result.body) as HaNodeState;
  }

  async getConfig(host: string): Promise<Record<string, unknown>> {
    const result = await this.call(host, 'GET', HaNodePaths.config);
    if (result.status !== 200) throw new Error(`ha-node ${host} /config answered ${result.status}`);
    return JSON.parse(result.body) as Record<string, unknown>;
  }

  /** Merges keys into the dynamic configuration (null removes a key). */
  async patchConfig(host: string, patch: Record<string, unknown>): Promise<HaNodeResult> {
    return this.call(host, 'PATCH', HaNodePaths.config, patch);
  }

  /** POST /switchover answers once the candidate leads (as Patroni's does): seconds, not milliseconds. */
  async switchover(host: string, leader: string, candidate: string): Promise<HaNodeResult> {
    return this.call(host, 'POST', HaNodePaths.switchover, { leader, candidate }, switchoverTimeoutMs);
  }

  /** pgBackRest status and backups of a member (GET /backup). */
  async backupStatus(host: string): Promise<HaBackupStatus> {
    const result = await this.call(host, 'GET', HaNodePaths.backup);
    if (result.status !== 200) throw new Error(`ha-node ${host} /backup answered ${result.status}`);
    return JSON.parse(result.body) as HaBackupStatus;
  }

  /** Starts a backup on the primary (202), or says why not (409 one runs, 503 not ready). */
  async startBackup(host: string, type: 'full' | 'diff' | 'incr', repository = 1): Promise<HaNodeResult> {
    return this.call(host, 'POST', HaNodePaths.backup, { type, repository });
  }

  /** Restarts PostgreSQL on one member only when a configuration change is pending. */
  async restartPending(host: string): Promise<HaNodeResult> {
    return this.call(host, 'POST', HaNodePaths.restart, { restart_pending: true });
  }
}
