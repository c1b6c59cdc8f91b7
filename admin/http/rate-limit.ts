/**
 * Fixed-window counters in process memory. Login limits are per replica: an attacker spread over
 * N replicas gets N times the budget, which is acceptable for a brute-force brake and keeps login
 * working while Redis is down.
 */
export interface RateLimiter {
  /** Counts one hit; returns seconds to wait when the key is over its limit, else 0. */
  hit(key: string, limit: number, now?: number): number;
  reset(key: string): void;
}

export function createRateLimiter(windowSeconds: number, maxKeys = 100_000): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const windowMs = windowSeconds * 1000;
  const sweep = (now: number): void => {
    for (const [key, w] of windows) if (now - w.start >= windowMs) windows.delete(key);
  };
  return {
    hit(key, limit, now = Date.now()) {
      let w = windows.get(key);
      if (!w || now - w.start >= windowMs) {
        if (windows.size >= maxKeys) sweep(now);
        w = { start: now, count: 0 };
        windows.set(key, w);
      }
      w.count++;
      return w.count > limit ? Math.ceil((w.start + windowMs - now) / 1000) : 0;
    },
    reset(key) {
      windows.delete(key);
    },
  };
}

/** Failed attempts per key: after `limit` failures within the window the key is locked until it ends. */
export interface FailureLock {
  recordFailure(key: string, now?: number): void;
  isLocked(key: string, now?: number): boolean;
  clear(key: string): void;
}

export function createFailureLock(windowSeconds: number, limit: number, maxKeys = 100_000): FailureLock {
  const failures = new Map<string, { start: number; count: number }>();
  const windowMs = windowSeconds * 1000;
  return {
    recordFailure(key, now = Date.now()) {
      const entry = failures.get(key);
      if (!entry || now - entry.start >= windowMs) {
        if (failures.size >= maxKeys) failures.clear();
        failures.set(key, { start: now, count: 1 });
      } else entry.count++;
    },
    isLocked(key, now = Date.now()) {
      const entry = failures.get(key);
      return !!entry && now - entry.start < windowMs && entry.count >= limit;
    },
    clear(key) {
      failures.delete(key);
    },
  };
}
