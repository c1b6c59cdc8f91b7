import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log.js';

/**
 * A list-then-watch cache with periodic relist. client-node's own informer can stop silently when
 * a watch drops (kubernetes-client/javascript#596, #958), so this one relists on a timer, restarts
 * every watch that ends, lists again on 410 Gone, and counts restarts for /metrics.
 *
 * The first list and the one after 410 Gone read the latest state (a quorum read). Periodic
 * relists and those after a broken watch name the version the cache has seen: the API server
 * answers from its watch cache with a list no older than that (client-go's reflector does the
 * same), so a fleet-wide relist costs the server no etcd read. Not `resourceVersion=0`: a list
 * from "any" cache state may be older than the cache here, and replacing the cache with it would
 * drop objects created since. A relist also never replaces a cached object by an older version.
 */

export type InformerEvent = 'add' | 'update' | 'delete';

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface InformerOptions<T extends KubernetesObject> {
  kubeConfig: KubeConfig;
  /** Collection path for the watch, e.g. /apis/keelson.io/v1/databaseclusters. */
  path: string;
  /**
   * Lists the same collection (same selector) and returns the list's resourceVersion.
   * `resourceVersion` '' asks for the latest state; a version asks for a list no older than it.
   */
  list: (resourceVersion: string) => Promise<ListResult<T>>;
  labelSelector?: string;
  /** Full relist period; every object is handed to onResync afterwards (default 5 min). */
  relistIntervalMs?: number;
  /** Asks the server to end each watch after this long, so a dead connection cannot linger (default 290 s). */
  watchTimeoutSeconds?: number;
  /** `previous` is the cached object an update or delete replaces (undefined for an add). */
  onEvent: (event: InformerEvent, object: T, previous?: T) => void;
  onResync?: (objects: T[]) => void;
  onWatchRestart?: (reason: string) => void;
  logger: Logger;
}

export function objectKey(object: KubernetesObject): string {
  const namespace = object.metadata?.namespace;
  return namespace ? `${namespace}/${object.metadata?.name}` : String(object.metadata?.name);
}

/**
 * True when `a` is a later version than `b`. Resource versions are opaque in general, but both
 * etcd-backed servers and the stand-in issue increasing integers (client-go's mutation cache
 * relies on the same); anything else counts as not newer.
 */
function isNewer(a: KubernetesObject, b: KubernetesObject): boolean {
  const left = a.metadata?.resourceVersion;
  const right = b.metadata?.resourceVersion;
  if (!left || !right || !/^\d+$/.test(left) || !/^\d+$/.test(right)) return false;
  return BigInt(left) > BigInt(right);
}

export class Informer<T extends KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private resourceVersion = '';
  private abort: AbortController | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  private failures = 0;
  private synced = false;
  /** When the last list or watch event arrived (watch health for readiness). */
  lastActivity = 0;

  constructor(private readonly options: InformerOptions<T>) {}

  get hasSynced(): boolean {
    return this.synced;
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  /**
   * Stores the result of one's own write until the watch delivers it, so the next pass does not
   * read the version the write replaced. An older version never overwrites a newer one (the
   * watch may still deliver events from before the write); no event is emitted.
   */
  remember(object: T): void {
    const key = objectKey(object);
    const cached = this.cache.get(key);
    if (cached && isNewer(cached, object)) return;
    this.cache.set(key, object);
  }

  /** Drops an object one deleted oneself (the watch's DELETED event follows). */
  forget(object: KubernetesObject): void {
    this.cache.delete(objectKey(object));
  }

  /** Lists once (throws when that fails) and then keeps the watch running until stop(). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.relist();
    this.scheduleRelist();
    await this.startWatch();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.relistTimer);
    clearTimeout(this.retryTimer);
    this.abort?.abort();
    this.abort = undefined;
  }

  private scheduleRelist(): void {
    clearTimeout(this.relistTimer);
    if (this.stopped) return;
    this.relistTimer = setTimeout(() => {
      this.relist()
        .catch((err: unknown) => this.options.logger.warn({ err, path: this.options.path }, 'periodic relist failed'))
        .finally(() => this.scheduleRelist());
    }, this.options.relistIntervalMs ?? 300_000);
    this.relistTimer.unref();
  }

  /**
   * The list for a relist: from the API server's watch cache, no older than `seenVersion`, when
   * one is given; the latest state when none is, or when the server cannot serve that version
   * (410 Gone, or 504 while its cache has not caught up to a version another server issued).
   */
  private async listFrom(seenVersion: string): Promise<ListResult<T>> {
    if (!seenVersion) return this.options.list('');
    try {
      return await this.options.list(seenVersion);
    } catch (err) {
      const status = (err as { code?: number; statusCode?: number } | null)?.code ?? (err as { statusCode?: number } | null)?.statusCode;
      if (status !== 410 && status !== 504) throw err;
      return this.options.list('');
    }
  }

  /**
   * Replaces the cache with a list, emitting the differences, then hands every object to
   * onResync. `latest`: read the latest state (after 410 Gone) rather than from the server's cache.
   */
  async relist(latest = false): Promise<void> {
    const { items, resourceVersion } = await this.listFrom(latest ? '' : this.resourceVersion);
    if (this.stopped) return;
    const seen = new Set<string>();
    for (const item of items) {
      const key = objectKey(item);
      seen.add(key);
      const previous = this.cache.get(key);
      // The watch may have delivered a newer version while the list was on its way.
      if (previous && isNewer(previous, item)) continue;
      this.cache.set(key, item);
      if (!previous) this.options.onEvent('add', item);
      else if (previous.metadata?.resourceVersion !== item.metadata?.resourceVersion) this.options.onEvent('update', item, previous);
    }
    const listed = { metadata: { resourceVersion } };
    for (const [key, item] of this.cache) {
      // An object newer than the list was created after it: absent from it, yet not deleted.
      if (!seen.has(key) && !isNewer(item, listed)) {
        this.cache.delete(key);
        this.options.onEvent('delete', item, item);
      }
    }
    if (!this.resourceVersion || !isNewer({ metadata: { resourceVersion: this.resourceVersion } }, listed)) this.resourceVersion = resourceVersion;
    this.synced = true;
    this.lastActivity = Date.now();
    this.options.onResync?.(items);
  }

  private async startWatch(): Promise<void> {
    if (this.stopped) return;
    const watch = new Watch(this.options.kubeConfig);
    const params: Record<string, string | number | boolean> = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: this.options.watchTimeoutSeconds ?? 290,
    };
    if (this.options.labelSelector) params.labelSelector = this.options.labelSelector;
    let expired = false;
    const abort = await watch.watch(
      this.options.path,
      params,
      (phase: string, object: T & { code?: number }) => {
        this.lastActivity = Date.now();
        if (phase === 'ERROR') {
          if (object.code === 410) expired = true;
          return;
        }
        const version = object.metadata?.resourceVersion;
        if (version) this.resourceVersion = version;
        if (phase === 'BOOKMARK') return;
        this.failures = 0;
        this.apply(phase, object);
      },
      (err: unknown) => this.onWatchEnd(err, expired),
    );
    // stop() may have run while the watch was being opened: it must not outlive the informer.
    if (this.stopped) abort.abort();
    else this.abort = abort;
  }

  private apply(phase: string, object: T): void {
    const key = objectKey(object);
    const previous = this.cache.get(key);
    if (phase === 'DELETED') {
      this.cache.delete(key);
      this.options.onEvent('delete', object, previous);
      return;
    }
    this.cache.set(key, object);
    this.options.onEvent(previous ? 'update' : 'add', object, previous);
  }

  private onWatchEnd(err: unknown, expired: boolean): void {
    if (this.stopped) return;
    const status = (err as { statusCode?: number } | null)?.statusCode;
    const mustRelist = expired || status === 410 || (err !== null && err !== undefined);
    const reason = expired || status === 410 ? 'expired' : err ? 'error' : 'closed';
    this.options.onWatchRestart?.(reason);
    if (err) this.failures += 1;
    // A clean close re-watches at once; errors back off (0.5 s doubling to 30 s) so a down API server is not hammered.
    const delay = err ? Math.min(30_000, 500 * 2 ** Math.min(this.failures - 1, 6)) : 0;
    if (err) this.options.logger.warn({ err, path: this.options.path, delayMs: delay }, 'watch failed; restarting');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      const next = mustRelist ? this.relist(expired || status === 410).then(() => this.startWatch()) : this.startWatch();
      next.catch((error: unknown) => this.onWatchEnd(error ?? new Error('watch restart failed'), false));
    }, delay);
  }
}
