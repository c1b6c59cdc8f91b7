/**
 * A work queue keyed by object ("namespace/name") with the client-go guarantees a level-triggered
 * controller needs: a key is queued at most once, never processed by two workers at once (a key
 * added while it is being processed runs again afterwards), delayed adds, and per-key
 * exponential back-off that resets on success.
 */
export interface WorkQueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  onDepthChange?: (depth: number) => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirtyWhileProcessing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;

  constructor(private readonly options: WorkQueueOptions = {}) {}

  get depth(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      this.dirtyWhileProcessing.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
    this.options.onDepthChange?.(this.queue.length);
  }

  /** Adds the key after a delay; an earlier pending delayed add for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const existing = this.timers.get(key);
    if (existing) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, timer);
  }

  /** Re-adds a failed key with back-off: base * 2^failures, capped. Returns the delay used. */
  addRateLimited(key: string): number {
    const count = this.failures.get(key) ?? 0;
    this.failures.set(key, count + 1);
    const delay = Math.min(this.options.maxDelayMs ?? 300_000, (this.options.baseDelayMs ?? 500) * 2 ** count);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the back-off of a key after a successful reconcile. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Next key to process, waiting for one; undefined once shut down. */
  async get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      this.options.onDepthChange?.(this.queue.length);
      return key;
    }
    if (this.shuttingDown) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks a key finished; if it changed meanwhile it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirtyWhileProcessing.delete(key)) this.add(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
