import { HaNodePaths, Ports } from '../lib/ports.js';
import { callUrl } from '../lib/http-call.js';
import { dynamicConfigSchema, type DynamicConfigInput, type DynamicConfigPatch } from '../api/ha-node/dynamic-config.js';
import {
  backupStatusSchema,
  clusterDocumentSchema,
  nodeDocumentSchema,
  parseAnswer,
  poolersDocumentSchema,
  type BackupSet,
  type BackupStatus,
  type ClusterMember,
  type Demotion,
  type NodeDocument,
  type PoolerListing,
  type PublishedVolumeUsage,
} from '../api/ha-node/rest-documents.js';
import { managedReportSchema, type ManagedReport } from '../api/crd/managed-status.js';

/**
 * The few ha-node REST calls the operator makes (spec/ha-node-api.md): cluster view, dynamic
 * configuration, switchover and restart. Short timeouts: a slow member must not stall a reconcile.
 */
/** The answers the operator reads, typed and parsed by the contract (api/ha-node/rest-documents.ts). */
export type HaClusterMember = ClusterMember;
export type HaVolume = PublishedVolumeUsage;
export type HaDemotion = Demotion;
export type HaNodeState = NodeDocument;
export type HaBackupSet = BackupSet;
export type HaBackupStatus = BackupStatus;
export type { PoolerListing };

export interface HaNodeResult {
  status: number;
  body: string;
}

export interface HaNodeCredentials {
  username: string;
  password: string;
}

/**
 * How one pod's API is reached: over HTTPS (its probes say so) with its certificate checked
 * against the cluster's CA by the name it carries under the headless Service while its address is
 * dialled; over HTTP only for a pod whose template predates TLS (until the roll replaces it).
 */
export interface HaNodeTarget {
  host: string;
  https: boolean;
  /** `<pod>.<cluster>-headless.<namespace>.svc`. */
  serverName: string;
  /** The server CA bundle (`ca.crt` of `<cluster>-server-tls`); absent: the system store, which does not hold the cluster's CA. */
  ca?: string;
}

/** How long the operator waits for a switchover's answer before it counts the call as failed. */
const switchoverTimeoutMs = 60_000;

export class HaNodeClient {
  constructor(
    private readonly timeoutMs = 3_000,
    private readonly port: number = Ports.haNodeApi,
    /** Basic-auth credentials for the mutating endpoints, by host (set per cluster before calls). */
    private readonly credentials = new Map<string, HaNodeCredentials>(),
    private readonly targets = new Map<string, HaNodeTarget>(),
  ) {}

  /** Remembers how to reach and verify these pods (set per cluster before calls). */
  useTargets(targets: HaNodeTarget[]): void {
    for (const target of targets) this.targets.set(target.host, target);
  }

  /** Remembers the API credentials to present to these hosts (the cluster's pods). */
  useCredentials(hosts: string[], credentials: HaNodeCredentials | undefined): void {
    for (const host of hosts) {
      if (credentials) this.credentials.set(host, credentials);
      else this.credentials.delete(host);
    }
  }

  private url(host: string, path: string): string {
    const scheme = this.targets.get(host)?.https === false ? 'http' : 'https';
    return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${this.port}${path}`;
  }

  private async call(host: string, method: string, path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<HaNodeResult> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    const credentials = this.credentials.get(host);
    if (credentials) headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    const target = this.targets.get(host);
    // A host never described is still called over HTTPS (and only the system store trusted): it fails rather than talk in the clear.
    const tls = { ...(target?.ca ? { ca: target.ca } : {}), ...(target ? { servername: target.serverName } : {}) };
    const answer = await callUrl(this.url(host, path), { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), timeoutMs, tls });
    return { status: answer.status, body: answer.body };
  }

  async cluster(host: string): Promise<HaClusterMember[]> {
    const result = await this.call(host, 'GET', HaNodePaths.cluster);
    if (result.status !== 200) throw new Error(`ha-node ${host} /cluster answered ${result.status}`);
    return parseAnswer(clusterDocumentSchema, result.body, `ha-node ${host} /cluster`).members;
  }

  /** The cluster's poolers as the member finds them (GET /poolers). */
  async poolers(host: string): Promise<PoolerListing[]> {
    const result = await this.call(host, 'GET', HaNodePaths.poolers);
    if (result.status !== 200) throw new Error(`ha-node ${host} /poolers answered ${result.status}`);
    return parseAnswer(poolersDocumentSchema, result.body, `ha-node ${host} /poolers`).poolers;
  }

  /** The node state document (GET /): role, state, pending_restart. */
  async nodeState(host: string): Promise<HaNodeState> {
    const result = await this.call(host, 'GET', HaNodePaths.node);
    return parseAnswer(nodeDocumentSchema, result.body, `ha-node ${host} /`);
  }

  async getConfig(host: string): Promise<DynamicConfigInput> {
    const result = await this.call(host, 'GET', HaNodePaths.config);
    if (result.status !== 200) throw new Error(`ha-node ${host} /config answered ${result.status}`);
    return parseAnswer(dynamicConfigSchema, result.body, `ha-node ${host} /config`);
  }

  /** Merges keys into the dynamic configuration (null removes a key). */
  async patchConfig(host: string, patch: DynamicConfigPatch): Promise<HaNodeResult> {
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
    return parseAnswer(backupStatusSchema, result.body, `ha-node ${host} /backup`);
  }

  /** Starts a backup on the primary (202), or says why not (409 one runs, 503 not ready). */
  async startBackup(host: string, type: 'full' | 'diff' | 'incr', repository = 1): Promise<HaNodeResult> {
    return this.call(host, 'POST', HaNodePaths.backup, { type, repository });
  }

  /** The leader's last pass over spec.roles and the Database objects (GET /managed); undefined when it has none yet. */
  async managed(host: string): Promise<ManagedReport | undefined> {
    const result = await this.call(host, 'GET', HaNodePaths.managed);
    if (result.status === 404) return undefined;
    if (result.status !== 200) throw new Error(`ha-node ${host} /managed answered ${result.status}`);
    const parsed = managedReportSchema.safeParse(JSON.parse(result.body));
    if (!parsed.success) throw new Error(`ha-node ${host} /managed answered an unexpected document`);
    return parsed.data;
  }

  /** Restarts PostgreSQL on one member only when a configuration change is pending. */
  async restartPending(host: string): Promise<HaNodeResult> {
    return this.call(host, 'POST', HaNodePaths.restart, { restart_pending: true });
  }
}
