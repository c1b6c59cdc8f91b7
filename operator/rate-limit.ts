/**
 * The work queue's rate limiters, as client-go's default controller rate limiter combines them:
 * per-key exponential back-off (a key that keeps failing waits longer each time) and one token
 * bucket over all keys (many keys failing at once cannot flood the API server).
 */

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/** Per-key exponential back-off: base * 2^attempts, capped; forget() starts a key over. */
export class ItemBackoff {
  private readonly attempts = new Map<string, number>();

  constructor(private readonly options: BackoffOptions) {}

  /** The delay for this attempt of `key` (counted); `baseMs` overrides the default base. */
  next(key: string, baseMs = this.options.baseMs): number {
    const count = this.attempts.get(key) ?? 0;
    this.attempts.set(key, count + 1);
    return Math.min(this.options.maxMs, baseMs * 2 ** Math.min(count, 30));
  }

  forget(key: string): void {
    this.attempts.delete(key);
  }

  count(key: string): number {
    return this.attempts.get(key) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Tokens added per second. */
  perSecond: number;
  /** Tokens the bucket holds (the burst allowed after a quiet spell). */
  burst: number;
}

/**
 * A token bucket that hands out reservations: the delay until the token taken now is earned
 * (0 while the bucket has tokens). Reservations go into debt, so a burst of callers is spread
 * out at `perSecond` rather than all retried together.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly options: TokenBucketOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = options.burst;
    this.updatedAt = now();
  }

  reserve(): number {
    const now = this.now();
    this.tokens = Math.min(this.options.burst, this.tokens + ((now - this.updatedAt) / 1000) * this.options.perSecond);
    this.updatedAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.options.perSecond) * 1000;
  }
}
