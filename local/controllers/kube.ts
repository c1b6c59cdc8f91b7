/**
 * Small helpers over @kubernetes/client-node shared by the controllers, the node agent and the
 * proxy: error codes, merge-patch options, self-restarting informers and a keyed work queue.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';

export function statusCode(err: unknown): number | undefined {
  if (err instanceof k8s.ApiException) return err.code;
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'number') return (err as { code: number }).code;
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;

/** Options that make a generated `patch…` call send a JSON merge patch. */
export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

export function objectKey(obj: k8s.KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The controlling owner of kind `kind`, if any. */
export function controllerOf(obj: k8s.KubernetesObject, kind: string): k8s.V1OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true && ref.kind === kind);
}

export interface WatchHandlers<T extends k8s.KubernetesObject> {
  onChange(obj: T, type: 'add' | 'update' | 'delete'): void;
}

export interface RunningInformer<T extends k8s.KubernetesObject> {
  list(namespace?: string): readonly T[];
  get(name: string, namespace?: string): T | undefined;
  stop(): Promise<void>;
}

/**
 * An informer that lists, watches and restarts itself after errors (client-node's informer stops
 * on any error other than 410). Resolves once the first list has been delivered.
 */
export async function startInformer<T extends k8s.KubernetesObject>(
  kc: k8s.KubeConfig,
  path: string,
  list: () => Promise<k8s.KubernetesListObject<T>>,
  handlers: WatchHandlers<T>,
  logger: Logger,
  retryMs = 1000,
): Promise<RunningInformer<T>> {
  const informer = k8s.makeInformer<T>(kc, path, list);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  informer.on('add', (obj) => handlers.onChange(obj, 'add'));
  informer.on('update', (obj) => handlers.onChange(obj, 'update'));
  informer.on('delete', (obj) => handlers.onChange(obj, 'delete'));
  informer.on('error', (err) => {
    if (stopped) return;
    logger.debug({ path, err: err instanceof Error ? err.message : String(err) }, 'watch failed, restarting');
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stopped) informer.start().catch(() => undefined);
    }, retryMs);
  });
  for (;;) {
    try {
      await informer.start();
      break;
    } catch (err) {
      logger.warn({ path, err: err instanceof Error ? err.message : String(err) }, 'initial list failed, retrying');
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }
  return {
    list: (namespace) => informer.list(namespace),
    get: (name, namespace) => informer.get(name, namespace),
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await informer.stop();
    },
  };
}

/**
 * Keyed work queue: a key enqueued many times is reconciled once; keys are processed one at a
 * time; failures are retried after a delay; `resyncMs` re-enqueues everything `keys()` returns.
 */
export class WorkQueue {
  private readonly pending = new Set<string>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private running = false;
  private stopped = false;
  private held = false;
  private resync?: NodeJS.Timeout;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly reconcile: (key: string) => Promise<void>,
    private readonly logger: Logger,
    private readonly retryMs = 1000,
  ) {}

  /** Collects keys without processing them until resume() (while informers are still starting). */
  hold(): this {
    this.held = true;
    return this;
  }

  resume(): void {
    this.held = false;
    if (!this.running && this.pending.size > 0) void this.drain();
  }

  startResync(keys: () => string[], everyMs: number): void {
    this.resync = setInterval(() => keys().forEach((k) => this.add(k)), everyMs);
    this.resync.unref();
  }

  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    if (!this.running && !this.held) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.pending.size > 0 && !this.stopped) {
      const [key] = this.pending;
      this.pending.delete(key);
      try {
        await this.reconcile(key);
        this.failures.delete(key);
      } catch (err) {
        // Per-key exponential back-off (retryMs doubling, capped at 30 s) keeps a persistent
        // failure, such as an address in use, from flooding the log and the API server.
        const failures = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, failures);
        const delay = Math.min(this.retryMs * 2 ** (failures - 1), 30_000);
        const log = failures <= 3 ? this.logger.warn.bind(this.logger) : this.logger.debug.bind(this.logger);
        log({ key, failures, retryInMs: delay, err: err instanceof Error ? err.message : String(err) }, 'reconcile failed, will retry');
        clearTimeout(this.retryTimers.get(key));
        this.retryTimers.set(
          key,
          setTimeout(() => {
            this.retryTimers.delete(key);
            this.add(key);
          }, delay),
        );
      }
    }
    this.running = false;
    for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.resync);
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
    this.pending.clear();
  }

  /** Resolves when nothing is being processed (used on shutdown). */
  idle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
