import type { LeaderRecord } from './types.js';

/**
 * Judges leader expiry by local observation, as client-go and Patroni's Kubernetes DCS do:
 * the record is alive for `ttl` seconds of our own monotonic clock after we last saw it change.
 * No clock comparison between machines. A timer fires at the expiry instant so the loop wakes
 * within moments of the lease lapsing instead of on its next scheduled run.
 */
export interface ObserverClock {
  now(): number;
  setTimer(ms: number, fn: () => void): { cancel(): void };
}

export const monotonicClock: ObserverClock = {
  now: () => performance.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

/** The parts of a record whose change proves the holder is alive. */
function fingerprint(record: LeaderRecord | undefined): string {
  if (!record) return '';
  return JSON.stringify([record.holder, record.renewTime, record.transitions, record.ttl, record.resourceVersion]);
}

/**
 * Whether a new leader record is news the HA loop must act on now: another holder, a new term
 * (acquire, transitions), another ttl or a release. A renewal by the same live holder is not: the
 * expiry timer already covers its absence. A record that had expired by our observation wakes
 * the loop whatever changed (the holder is back).
 */
export function leaderChangeWakes(previous: LeaderRecord | undefined, next: LeaderRecord | undefined, previousExpired: boolean): boolean {
  if (!previous || !next || previousExpired) return true;
  return (
    previous.holder !== next.holder ||
    previous.transitions !== next.transitions ||
    previous.ttl !== next.ttl ||
    previous.acquireTime !== next.acquireTime ||
    previous.releasedCheckpoint !== next.releasedCheckpoint
  );
}

export class LeaderObserver {
  private lastFingerprint = '';
  private observedAt = 0;
  private record: LeaderRecord | undefined;
  private timer: { cancel(): void } | undefined;

  constructor(
    private readonly clock: ObserverClock,
    private readonly onExpire: () => void,
  ) {}

  /** Feeds a freshly read record; returns true when it differs from the last one seen. */
  observe(record: LeaderRecord | undefined): boolean {
    const print = fingerprint(record);
    if (print === this.lastFingerprint) return false;
    this.lastFingerprint = print;
    this.observedAt = this.clock.now();
    this.record = record;
    this.arm();
    return true;
  }

  /** Records our own successful write: alive from the moment we started it. */
  observeOwnWrite(record: LeaderRecord, startedAt: number): void {
    this.lastFingerprint = fingerprint(record);
    this.observedAt = startedAt;
    this.record = record;
    this.arm();
  }

  /** The record if it names a holder that has not expired, else undefined. */
  current(): LeaderRecord | undefined {
    if (!this.record || !this.record.holder) return undefined;
    return this.isExpired() ? undefined : this.record;
  }

  raw(): LeaderRecord | undefined {
    return this.record;
  }

  isExpired(): boolean {
    if (!this.record || !this.record.holder) return true;
    return this.clock.now() >= this.observedAt + this.record.ttl * 1000;
  }

  /** Milliseconds until the current holder expires (0 when already expired or no holder). */
  remainingMs(): number {
    if (!this.record || !this.record.holder) return 0;
    return Math.max(0, this.observedAt + this.record.ttl * 1000 - this.clock.now());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (!this.record || !this.record.holder) return;
    // A few ms late so that isExpired() is already true when the listener runs.
    this.timer = this.clock.setTimer(this.remainingMs() + 5, () => {
      this.timer = undefined;
      this.onExpire();
    });
  }
}
