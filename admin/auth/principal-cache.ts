import { KvKeys } from '../cache/kv.js';
import type { InvalidatedKeys } from '../cache/tracking.js';
import type { ContextUser } from '../http/context.js';

/** Who a request acts as, with its grants (principals.ts resolves it; this cache keeps it). */
export interface Principal {
  user: ContextUser;
  /** Enabled roles only, most recently created first. */
  roleCodes: string[];
  buttonCodes: string[];
  grants: Map<string, string>;
}

/** What one lookup read from Redis: the stored session version and the cached principal. */
export interface CachedAuthz {
  /** `token_version:{id}` as Redis holds it (null when absent). */
  version: string | null;
  principal: Principal;
}

/** Taken before a Redis read; the read's result may be kept only if nothing changed meanwhile. */
export interface ReadTicket {
  userId: number;
  global: number;
  user: number;
}

const tokenVersionPrefix = KvKeys.tokenVersion(0).slice(0, -1);
const principalPrefix = KvKeys.principal('', 0).slice(0, -2);

/** The user id a tracked key belongs to, or undefined when a change can concern everyone. */
export function userOfKey(key: string): number | undefined {
  if (key.startsWith(tokenVersionPrefix)) return Number(key.slice(tokenVersionPrefix.length));
  if (key.startsWith(principalPrefix)) return Number(key.slice(key.lastIndexOf(':') + 1));
  return undefined;
}

/**
 * The process-memory copy of what the per-request Redis lookup returns, kept only while Redis
 * reports changes (see KeyTracker). Invalidation counters make the race between a read in flight
 * and a change notice harmless: a read whose user (or everyone) was invalidated after the read
 * began is not kept. Entries also age out after `maxAgeMs`, a bound on staleness should a notice
 * ever go missing without the connection dropping.
 */
export class PrincipalCache {
  private readonly entries = new Map<number, CachedAuthz & { storedAt: number }>();
  private readonly userCounters = new Map<number, number>();
  private globalCounter = 0;

  constructor(
    private readonly maxAgeMs = 10_000,
    private readonly maxEntries = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(userId: number): CachedAuthz | undefined {
    const entry = this.entries.get(userId);
    if (entry && this.now() - entry.storedAt > this.maxAgeMs) {
      this.entries.delete(userId);
      return undefined;
    }
    return entry;
  }

  beginRead(userId: number): ReadTicket {
    return { userId, global: this.globalCounter, user: this.userCounters.get(userId) ?? 0 };
  }

  /** Keeps a read's result unless its user or everyone was invalidated since the read began. */
  store(ticket: ReadTicket, value: CachedAuthz): boolean {
    if (ticket.global !== this.globalCounter || ticket.user !== (this.userCounters.get(ticket.userId) ?? 0)) return false;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(ticket.userId, { ...value, storedAt: this.now() });
    return true;
  }

  /** Applies a change notice: per-user keys drop that user, anything else drops everyone. */
  invalidate(keys: InvalidatedKeys): void {
    if (keys === null) return this.clear();
    for (const key of keys) {
      const userId = userOfKey(key);
      if (userId === undefined || !Number.isSafeInteger(userId)) return this.clear();
      this.forget(userId);
    }
  }

  forget(userId: number): void {
    this.entries.delete(userId);
    this.userCounters.set(userId, (this.userCounters.get(userId) ?? 0) + 1);
  }

  clear(): void {
    this.entries.clear();
    // Per-user counters only need to differ from tickets taken before; the global one covers them.
    this.userCounters.clear();
    this.globalCounter++;
  }

  get size(): number {
    return this.entries.size;
  }
}
