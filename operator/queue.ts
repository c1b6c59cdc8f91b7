import { ItemBackoff, TokenBucket } from './rate-limit.js';

/**
 * A work queue keyed by object ("namespace/name") with the client-go guarantees a level-triggered
 * controller needs: a key is queued at most once, never processed by two workers at once (a key
 * added while it is being processed runs again afterwards), delayed adds, per-key exponential
 * back-off that resets on success, and an overall token bucket for retries. On top, priorities:
 * a user's change goes before owned-object events, which go before periodic resyncs, so a spec
 * change never waits behind a fleet-wide resync backlog. A key queued at a lower priority moves
 * up when added again at a higher one.
 */
export type Priority = 'high' | 'normal' | 'low';

const priorities: Priority[] = ['high', 'normal', 'low'];
const rank: Record<Priority, number> = { high: 0, normal: 1, low: 2 };

export interface WorkQueueOptions {
  /** Back-off of a failing key (default 500 ms doubling to 5 min). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Retries over all keys (default 10 per second, bursts of 100, as client-go). */
  retriesPerSecond?: number;
  retryBurst?: number;
  /**
   * Cap of the back-off for a key that is still converging (default 1 min): progress a watch
   * does not see (ha-node's replication state, a pending restart) is still noticed within it.
   */
  maxConvergingDelayMs?: number;
  /** Milliseconds for the retry bucket (a test can freeze it). */
  clock?: () => number;
  onDepthChange?: (depth: number) => void;
}

/** What a successful reconcile pass asks of the queue (operator/reconcile/cluster.ts ReconcileResult). */
export interface PassOutcome {
  requeueAfterMs?: number;
  converging?: boolean;
  progressed?: boolean;
}

export class WorkQueue {
  /** One FIFO per priority; an entry whose key moved to another priority is skipped (lazy removal). */
  private readonly lanes: Record<Priority, string[]> = { high: [], normal: [], low: [] };
  private readonly queued = new Map<string, Priority>();
  private readonly processing = new Set<string>();
  private readonly dirtyWhileProcessing = new Map<string, Priority>();
  private readonly failures: ItemBackoff;
  private readonly converging: ItemBackoff;
  private readonly retries: TokenBucket;
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; readyAt: number }>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;

  constructor(private readonly options: WorkQueueOptions = {}) {
    this.failures = new ItemBackoff({ baseMs: options.baseDelayMs ?? 500, maxMs: options.maxDelayMs ?? 300_000 });
    this.converging = new ItemBackoff({ baseMs: 5_000, maxMs: options.maxConvergingDelayMs ?? 60_000 });
    this.retries = new TokenBucket({ perSecond: options.retriesPerSecond ?? 10, burst: options.retryBurst ?? 100 }, options.clock);
  }

  get depth(): number {
    return this.queued.size;
  }

  add(key: string, priority: Priority = 'normal'): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      const previous = this.dirtyWhileProcessing.get(key);
      if (!previous || rank[priority] < rank[previous]) this.dirtyWhileProcessing.set(key, priority);
      return;
    }
    const current = this.queued.get(key);
    if (current && rank[current] <= rank[priority]) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.set(key, priority);
    this.lanes[priority].push(key);
    this.options.onDepthChange?.(this.queued.size);
  }

  /** Adds the key (at normal priority) after a delay; the earliest pending delayed add of a key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const readyAt = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.readyAt <= readyAt) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { timer, readyAt });
  }

  /** Re-adds a failed key with back-off (per key, and overall at the retry rate). Returns the delay used. */
  addRateLimited(key: string): number {
    const delay = Math.max(this.failures.next(key), this.retries.reserve());
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * Re-adds a key whose object is still converging (nothing failed, it is just not there yet):
   * after `baseMs`, doubling on each consecutive call up to the cap, so a cluster that stays
   * unhealthy is looked at less and less often. Watch events still bring it back at once.
   */
  addConverging(key: string, baseMs: number): number {
    const delay = this.converging.next(key, baseMs);
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * Files a successful pass: a converging key comes back after its back-off, which starts over
   * when the pass took a step (waits double only while nothing moves); a settled key loses it.
   * Returns the delay used, if any.
   */
  requeueAfterPass(key: string, outcome: PassOutcome): number | undefined {
    if (!outcome.converging || outcome.progressed) this.settled(key);
    if (outcome.requeueAfterMs && outcome.converging) return this.addConverging(key, outcome.requeueAfterMs);
    if (outcome.requeueAfterMs) this.addAfter(key, outcome.requeueAfterMs);
    return outcome.requeueAfterMs;
  }

  /** Clears the failure back-off of a key after a successful reconcile. */
  forget(key: string): void {
    this.failures.forget(key);
  }

  /** Clears the converging back-off once the object converged (or its goal changed). */
  settled(key: string): void {
    this.converging.forget(key);
  }

  /** Next key to process, highest priority first, waiting for one; undefined once shut down. */
  async get(): Promise<string | undefined> {
    const key = this.next();
    if (key !== undefined) {
      this.processing.add(key);
      this.options.onDepthChange?.(this.queued.size);
      return key;
    }
    if (this.shuttingDown) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private next(): string | undefined {
    for (const priority of priorities) {
      const lane = this.lanes[priority];
      while (lane.length > 0) {
        const key = lane.shift()!;
        if (this.queued.get(key) !== priority) continue; // moved up to another lane
        this.queued.delete(key);
        return key;
      }
    }
    return undefined;
  }

  /** Marks a key finished; if it changed meanwhile it is queued again (at the priority it was added with). */
  done(key: string): void {
    this.processing.delete(key);
    const priority = this.dirtyWhileProcessing.get(key);
    if (priority) {
      this.dirtyWhileProcessing.delete(key);
      this.add(key, priority);
    }
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
