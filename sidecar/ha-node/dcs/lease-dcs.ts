import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../../lib/log.js';
import { describeApiError, isConflict, isNotFound, microTimeNow, withRequestTimeout } from '../../../lib/kube/client.js';
import { SharedAgents } from '../../../lib/kube/keep-alive.js';
import { LeaderObserver, leaderChangeWakes, monotonicClock, type ObserverClock } from './leader-observer.js';
import { MEMBER_SLOTS_TTL_MS, memberWriteNeeded, positionInLock } from './member-refresh.js';
import { clusterViewOf } from './cluster-view.js';
import {
  Label,
  RELEASED_BY,
  RELEASED_CHECKPOINT,
  baseLease,
  cloneLease,
  leaderFromLease,
  leaseName,
  memberFromLease,
  memberLeaseName,
  type DcsKey,
} from './lease-codec.js';
import type { ClusterView, ConfigWriteCondition, Dcs, DynamicConfig, FailoverRecord, HistoryEntry, LeaderRecord, MemberRecord, SyncRecord } from './types.js';

export interface LeaseDcsOptions {
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  scope: string;
  name: string;
  /** Current ttl in seconds (dynamic configuration may change it). */
  ttl: () => number;
  /** Bound for one API request in ms. */
  requestTimeoutMs: () => number;
  logger: Logger;
  clock?: ObserverClock;
  /** How long the HA loop may go on the watch cache before a fresh LIST (default LOOP_RESYNC_MS). */
  loopResyncMs?: number;
}

/**
 * The HA loop's safety net under the watch cache: a fresh LIST at least this often. A watch
 * delivers every change in order or ends (and an ended watch is relisted at once), so this only
 * guards against a change lost some other way.
 */
export const LOOP_RESYNC_MS = 5 * 60 * 1000;

function rvNumber(lease: k8s.V1Lease | undefined): number {
  const value = Number(lease?.metadata?.resourceVersion);
  return Number.isFinite(value) ? value : -1;
}

/**
 * The DCS on coordination.k8s.io/v1 Leases: `<scope>-leader` (the lock), `<scope>-config`
 * (dynamic config, initialize, history), `<scope>-failover`, `<scope>-sync` and one
 * `<scope>-member-<name>` per member. Every write is a CAS on metadata.resourceVersion.
 */
export class LeaseDcs implements Dcs {
  private readonly api: k8s.CoordinationV1Api;
  private readonly leases = new Map<string, k8s.V1Lease>();
  private readonly observer: LeaderObserver;
  private readonly clock: ObserverClock;
  private readonly listeners: ((reason: string) => void)[] = [];
  private readonly leaderName: string;
  private ownExpiry = 0;
  private lastSeenEpoch = 0;
  /** Date.now() of the last answer from the API server (a response or a watch event). */
  private lastContactMs = 0;
  /** clock.now() of the last completed LIST. */
  private lastListAt = Number.NEGATIVE_INFINITY;
  /** One keep-alive connection pool instead of a TLS handshake per request. */
  private readonly agents = new SharedAgents();
  private watchAbort: AbortController | undefined;
  /** The watch is open; with a LIST since it opened, the cache follows every change. */
  private watchActive = false;
  private listedSinceWatch = false;
  private stopped = false;

  constructor(private readonly options: LeaseDcsOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    this.clock = options.clock ?? monotonicClock;
    this.observer = new LeaderObserver(this.clock, () => this.wake('leader-expired'));
    this.leaderName = leaseName(options.scope, 'leader');
  }

  onWake(listener: (reason: string) => void): void {
    this.listeners.push(listener);
  }

  lastSeen(): number {
    return this.lastSeenEpoch;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.startWatch();
  }

  stop(): void {
    this.stopped = true;
    this.watchActive = false;
    this.observer.stop();
    this.watchAbort?.abort();
    this.agents.destroy();
  }

  isLeader(): boolean {
    const record = leaderFromLease(this.leases.get(this.leaderName));
    return record?.holder === this.options.name && this.clock.now() < this.ownExpiry;
  }

  holdLeadershipInFailsafe(elapsedMs: number): void {
    if (leaderFromLease(this.leases.get(this.leaderName))?.holder !== this.options.name) return;
    this.ownExpiry = Math.max(this.ownExpiry, this.clock.now() - elapsedMs + this.options.ttl() * 1000);
  }

  async getCluster(): Promise<ClusterView> {
    const list = await this.api.listNamespacedLease(
      { namespace: this.options.namespace, labelSelector: `${Label.cluster}=${this.options.scope}` },
      this.requestOptions(),
    );
    this.seen();
    // The LIST is the whole truth: anything cached and absent from it is gone (a missed DELETED event).
    const listed = new Set<string>();
    for (const lease of list.items) {
      const name = lease.metadata?.name ?? '';
      listed.add(name);
      this.remember(lease);
    }
    for (const name of [...this.leases.keys()]) if (!listed.has(name)) this.leases.delete(name);
    if (this.watchActive) this.listedSinceWatch = true;
    this.lastListAt = this.clock.now();
    this.observer.observe(leaderFromLease(this.leases.get(this.leaderName)));
    return this.viewOfCache();
  }

  /**
   * The cluster from the watch cache, with no API request: undefined unless the watch is open,
   * a LIST has completed since it opened and the API server answered within ttl. Reads that can
   * tolerate a view a watch event old (GET /cluster, /config, /history) use it; the HA loop and
   * every write path read fresh.
   */
  cachedCluster(): ClusterView | undefined {
    if (!this.watchActive || !this.listedSinceWatch) return undefined;
    if (Date.now() / 1000 - this.lastSeenEpoch > this.options.ttl()) return undefined;
    return this.viewOfCache();
  }

  /**
   * The cluster for one HA cycle: the watch cache while it is sound (watch open, relisted since,
   * the API server heard from within `silentMs`, the last LIST younger than the resync interval)
   * and shows a live leader; otherwise a fresh LIST. Anything that leads to a race or a write of
   * the lock without a live leader thus still starts from a LIST.
   */
  async clusterForLoop(silentMs: number): Promise<ClusterView> {
    const cached = Date.now() - this.lastContactMs <= silentMs ? this.cachedCluster() : undefined;
    const resyncMs = this.options.loopResyncMs ?? LOOP_RESYNC_MS;
    if (cached?.leader && this.clock.now() - this.lastListAt < resyncMs) return cached;
    return this.getCluster();
  }

  private viewOfCache(): ClusterView {
    return clusterViewOf(this.leases.values(), this.options.scope, { current: this.observer.current(), raw: this.observer.raw() });
  }

  async attemptToAcquireLeader(optime: number | undefined): Promise<boolean> {
    const current = this.leases.get(this.leaderName);
    const record = leaderFromLease(current);
    if (record?.holder && record.holder !== this.options.name && !this.observer.isExpired()) return false;
    return this.acquire(current, optime, 'acquire');
  }

  /**
   * Early takeover of a live-looking lease whose holder crashed (ADR 0404): a CAS on exactly the
   * version the crash evidence was judged against, so any write by the old holder since wins.
   */
  async takeOverLeader(expected: LeaderRecord, optime: number | undefined): Promise<boolean> {
    const current = this.leases.get(this.leaderName);
    const record = leaderFromLease(current);
    if (!current || !record?.holder || record.holder === this.options.name || record.holder !== expected.holder) return false;
    if (!expected.resourceVersion || current.metadata?.resourceVersion !== expected.resourceVersion) return false;
    return this.acquire(current, optime, 'takeover');
  }

  private acquire(current: k8s.V1Lease | undefined, optime: number | undefined, what: string): Promise<boolean> {
    const record = leaderFromLease(current);
    const started = this.clock.now();
    const now = microTimeNow();
    const body = current ? cloneLease(current) : baseLease(this.leaderName, this.options.scope, 'leader');
    body.spec = {
      holderIdentity: this.options.name,
      leaseDurationSeconds: this.options.ttl(),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: (record?.transitions ?? 0) + (record && record.holder !== this.options.name ? 1 : 0),
    };
    this.setOptime(body, optime);
    return this.writeLeader(body, current === undefined, started, now.toISOString(), what);
  }

  async updateLeader(optime: number | undefined, slots?: Record<string, number>, failsafe?: Record<string, string> | null): Promise<boolean> {
    const current = this.leases.get(this.leaderName);
    if (leaderFromLease(current)?.holder !== this.options.name || !current) return false;
    const started = this.clock.now();
    const now = microTimeNow();
    const body = cloneLease(current);
    body.spec = { ...body.spec, holderIdentity: this.options.name, leaseDurationSeconds: this.options.ttl(), renewTime: now };
    this.setOptime(body, optime);
    if (slots) body.metadata!.annotations!.slots = JSON.stringify(slots);
    if (failsafe) body.metadata!.annotations!.failsafe = JSON.stringify(failsafe);
    else if (failsafe === null) delete body.metadata!.annotations!.failsafe;
    if (await this.writeLeader(body, false, started, now.toISOString(), 'renew')) return true;
    // One retry with the freshly read version if the conflict was only a stale cache.
    const fresh = this.leases.get(this.leaderName);
    if (leaderFromLease(fresh)?.holder !== this.options.name || !fresh) return false;
    const retry = cloneLease(fresh);
    const again = microTimeNow();
    retry.spec = { ...retry.spec, renewTime: again, leaseDurationSeconds: this.options.ttl() };
    this.setOptime(retry, optime);
    return this.writeLeader(retry, false, started, again.toISOString(), 'renew-retry');
  }

  async deleteLeader(lastOptime: number | undefined, options: { shutdownCheckpoint?: boolean } = {}): Promise<boolean> {
    const current = this.leases.get(this.leaderName);
    if (!current || leaderFromLease(current)?.holder !== this.options.name) return false;
    const body = cloneLease(current);
    body.spec = { ...body.spec, holderIdentity: undefined, acquireTime: undefined, renewTime: microTimeNow() };
    this.setOptime(body, lastOptime);
    if (options.shutdownCheckpoint && lastOptime !== undefined) {
      body.metadata!.annotations![RELEASED_CHECKPOINT] = String(lastOptime);
      body.metadata!.annotations![RELEASED_BY] = this.options.name;
    }
    try {
      const result = await this.api.replaceNamespacedLease({ name: this.leaderName, namespace: this.options.namespace, body }, this.requestOptions());
      this.seen();
      this.ownExpiry = 0;
      this.remember(result);
      this.observer.observe(leaderFromLease(result));
      this.options.logger.info('released the leader lease');
      return true;
    } catch (error) {
      this.options.logger.warn({ err: describeApiError(error) }, 'could not release the leader lease');
      return false;
    }
  }

  async takeInitialize(): Promise<boolean> {
    const name = leaseName(this.options.scope, 'config');
    const current = await this.read(name);
    if (current && current.metadata?.annotations?.initialize !== undefined) return false;
    const body = current ? cloneLease(current) : baseLease(name, this.options.scope, 'config');
    body.metadata!.annotations!.initialize = '';
    try {
      await this.writeKey(name, current, body);
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  async setInitialize(sysid: string | undefined): Promise<void> {
    await this.mutate('config', (annotations) => {
      if (sysid === undefined) delete annotations.initialize;
      else annotations.initialize = sysid;
    });
  }

  async setConfig(config: DynamicConfig, condition?: ConfigWriteCondition): Promise<boolean> {
    if (condition && 'expectedVersion' in condition) return this.swapConfig(config, condition.expectedVersion);
    return this.mutate('config', (annotations) => {
      if (condition?.onlyIfMissing && annotations.config) return false;
      annotations.config = JSON.stringify(config);
      return true;
    });
  }

  /**
   * One compare-and-swap of the config key against the version the caller merged into: no re-read
   * and no retry here (the caller must re-merge and re-validate on a fresh view); false on conflict.
   */
  private async swapConfig(config: DynamicConfig, expectedVersion: string): Promise<boolean> {
    const name = leaseName(this.options.scope, 'config');
    const versionOf = (lease: k8s.V1Lease | undefined): string => lease?.metadata?.resourceVersion ?? '';
    let current = this.leases.get(name);
    // A cache that differs may only be behind (a missed watch event): read once to be sure.
    if (versionOf(current) !== expectedVersion) current = await this.read(name);
    if (versionOf(current) !== expectedVersion) return false;
    const body = current ? cloneLease(current) : baseLease(name, this.options.scope, 'config');
    body.metadata!.annotations!.config = JSON.stringify(config);
    try {
      await this.writeKey(name, current, body);
      return true;
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) return false;
      throw error;
    }
  }

  async setHistory(history: HistoryEntry[]): Promise<void> {
    await this.mutate('config', (annotations) => {
      annotations.history = JSON.stringify(history);
    });
  }

  async setFailover(failover: FailoverRecord | undefined): Promise<boolean> {
    return this.mutate('failover', (annotations) => {
      for (const key of ['leader', 'member', 'scheduled_at'] as const) {
        const value = failover?.[key];
        if (value) annotations[key] = value;
        else delete annotations[key];
      }
    });
  }

  async setSync(sync: SyncRecord | undefined): Promise<boolean> {
    return this.mutate('sync', (annotations) => {
      if (!sync) {
        delete annotations.leader;
        delete annotations.sync_standby;
        delete annotations.quorum;
        return;
      }
      annotations.leader = sync.leader ?? '';
      annotations.sync_standby = sync.sync_standby.join(',');
      if (sync.quorum === undefined) delete annotations.quorum;
      else annotations.quorum = String(sync.quorum);
    });
  }

  async touchMember(record: MemberRecord): Promise<boolean> {
    const name = memberLeaseName(this.options.scope, this.options.name);
    const stored = this.leases.get(name);
    if (stored && !memberWriteNeeded(memberFromLease(stored), record, positionInLock(record, this.isLeader()))) return false;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const current = attempt === 0 ? this.leases.get(name) : await this.read(name);
      const body = current ? cloneLease(current) : baseLease(name, this.options.scope, 'member');
      // The record stands until a member silent for member_slots_ttl loses its slot (see member-refresh.ts).
      body.spec = { holderIdentity: this.options.name, leaseDurationSeconds: MEMBER_SLOTS_TTL_MS / 1000, renewTime: microTimeNow() };
      body.metadata!.annotations!.status = JSON.stringify(record);
      try {
        const result = current
          ? await this.api.replaceNamespacedLease({ name, namespace: this.options.namespace, body }, this.requestOptions())
          : await this.api.createNamespacedLease({ namespace: this.options.namespace, body }, this.requestOptions());
        this.seen();
        this.leases.set(name, result);
        return true;
      } catch (error) {
        if (!isConflict(error) && !isNotFound(error)) throw error;
        this.leases.delete(name);
      }
    }
    return false;
  }

  // --- internals -------------------------------------------------------------------------

  private requestOptions(): k8s.ConfigurationOptions {
    return withRequestTimeout(this.options.requestTimeoutMs(), this.agents.middleware());
  }

  private seen(): void {
    this.lastContactMs = Date.now();
    this.lastSeenEpoch = Math.floor(this.lastContactMs / 1000);
  }

  private wake(reason: string): void {
    for (const listener of this.listeners) listener(reason);
  }

  /** Caches a lease unless we already hold a newer version of it. */
  private remember(lease: k8s.V1Lease): void {
    const name = lease.metadata?.name;
    if (!name) return;
    const cached = this.leases.get(name);
    if (cached && rvNumber(cached) > rvNumber(lease) && rvNumber(lease) >= 0) return;
    this.leases.set(name, lease);
  }

  /** Also drops the released checkpoint: it describes one release, never a held lock. */
  private setOptime(body: k8s.V1Lease, optime: number | undefined): void {
    delete body.metadata!.annotations![RELEASED_CHECKPOINT];
    delete body.metadata!.annotations![RELEASED_BY];
    if (optime !== undefined) body.metadata!.annotations!.optime = String(optime);
  }

  private async read(name: string): Promise<k8s.V1Lease | undefined> {
    try {
      const lease = await this.api.readNamespacedLease({ name, namespace: this.options.namespace }, this.requestOptions());
      this.seen();
      this.leases.set(name, lease);
      return lease;
    } catch (error) {
      if (isNotFound(error)) {
        this.seen();
        this.leases.delete(name);
        return undefined;
      }
      throw error;
    }
  }

  private async writeLeader(body: k8s.V1Lease, create: boolean, started: number, renewTime: string, what: string): Promise<boolean> {
    try {
      const result = create
        ? await this.api.createNamespacedLease({ namespace: this.options.namespace, body }, this.requestOptions())
        : await this.api.replaceNamespacedLease({ name: this.leaderName, namespace: this.options.namespace, body }, this.requestOptions());
      this.ownWriteLanded(result, started);
      return true;
    } catch (error) {
      if (!isConflict(error)) {
        this.options.logger.warn({ err: describeApiError(error), what }, 'leader lease write failed');
        // A renewal that could not reach the API is not a lost lock: the caller decides (retry, failsafe, demote).
        if (what.startsWith('renew')) throw error;
        return false;
      }
      // 409: an earlier attempt may have landed after all; read directly and compare.
      const fresh = await this.read(this.leaderName).catch(() => undefined);
      const record = leaderFromLease(fresh);
      this.observer.observe(record);
      if (fresh && record?.holder === this.options.name && sameInstant(record.renewTime, renewTime)) {
        this.ownWriteLanded(fresh, started);
        return true;
      }
      this.options.logger.info({ what, holder: record?.holder }, 'leader lease changed under us (409)');
      return false;
    }
  }

  private ownWriteLanded(lease: k8s.V1Lease, started: number): void {
    this.seen();
    this.leases.set(this.leaderName, lease);
    const record = leaderFromLease(lease) as LeaderRecord;
    this.observer.observeOwnWrite(record, started);
    this.ownExpiry = started + record.ttl * 1000;
  }

  /** Writes a cluster key: a CAS replace of the version read (`current`), or a create when absent. */
  private async writeKey(name: string, current: k8s.V1Lease | undefined, body: k8s.V1Lease): Promise<void> {
    const result = current
      ? await this.api.replaceNamespacedLease({ name, namespace: this.options.namespace, body }, this.requestOptions())
      : await this.api.createNamespacedLease({ namespace: this.options.namespace, body }, this.requestOptions());
    this.seen();
    this.remember(result);
  }

  /** Read-modify-write of one annotations-only key with CAS, retried on conflict. */
  private async mutate(key: Exclude<DcsKey, 'member' | 'leader'>, change: (annotations: Record<string, string>) => boolean | void): Promise<boolean> {
    const name = leaseName(this.options.scope, key);
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const current = await this.read(name);
      const body = current ? cloneLease(current) : baseLease(name, this.options.scope, key);
      if (change(body.metadata!.annotations!) === false) return false;
      try {
        await this.writeKey(name, current, body);
        return true;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
    throw new Error(`could not update ${name}: repeated conflicts`);
  }

  private async startWatch(): Promise<void> {
    if (this.stopped) return;
    const watch = new k8s.Watch(this.options.kubeConfig);
    const path = `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases`;
    const restart = (reason: unknown): void => {
      this.watchActive = false;
      if (this.stopped) return;
      if (reason) this.options.logger.debug({ err: describeApiError(reason) }, 'lease watch ended; restarting');
      setTimeout(() => void this.startWatch().catch(() => undefined), 1000).unref();
    };
    try {
      this.watchAbort = await watch.watch(
        path,
        { labelSelector: `${Label.cluster}=${this.options.scope}` },
        (phase: string, object: k8s.V1Lease) => this.onWatchEvent(phase, object),
        restart,
      );
      this.watchActive = !this.stopped;
      this.listedSinceWatch = false;
    } catch (error) {
      restart(error);
    }
  }

  private onWatchEvent(phase: string, lease: k8s.V1Lease): void {
    if (!lease?.metadata?.name) return;
    this.seen();
    const known = this.leases.has(lease.metadata.name);
    if (phase === 'DELETED') {
      this.leases.delete(lease.metadata.name);
    } else {
      this.remember(lease);
    }
    if (lease.metadata.labels?.[Label.dcsKey] === 'member') {
      // A member seen for the first time wakes the loop once: the leader creates its replication
      // slot now, not up to loop_wait later (the new replica cannot stream before that). Member
      // heartbeats only keep the cache current; the loop reads them on its own schedule.
      if (memberJoined(phase, known)) this.wake('member-joined');
      return;
    }
    if (lease.metadata.name === this.leaderName) {
      const previous = this.observer.raw();
      const wasExpired = this.observer.isExpired();
      const next = leaderFromLease(this.leases.get(this.leaderName));
      // A renewal by the same live holder only restarts the expiry timer; the loop need not run for it.
      if (this.observer.observe(next) && leaderChangeWakes(previous, next, wasExpired)) this.wake('leader-changed');
      return;
    }
    this.wake(`${lease.metadata.labels?.[Label.dcsKey] ?? 'key'}-changed`);
  }
}

/** A member lease event that announces a member this cache did not hold (not a heartbeat, not a replay). */
export function memberJoined(phase: string, known: boolean): boolean {
  return phase !== 'DELETED' && !known;
}

function sameInstant(a: string | undefined, b: string): boolean {
  if (!a) return false;
  return a === b || Date.parse(a) === Date.parse(b);
}
