import pg from 'pg';
import type { ServerStatus } from '../../postgres/status.js';
import { primaryHangTimeoutRange } from '../settings.js';
import type { PrimaryAnswer } from '../state.js';

/**
 * When a primary counts as hung, as pure rules over the record of its answers: what a probe
 * showed, the record after it, the verdict, and the hang timeout in force (hang-watch.ts acts on
 * the verdict, primary-heartbeat.ts asks every second).
 */

/** answered: status read; refused: the server sent an error; silent: no answer within the probe bound. */
export type ProbeOutcome = 'answered' | 'refused' | 'silent';

export type HangVerdict = { kind: 'starting' } | { kind: 'waiting' | 'hung'; silentSeconds: number };

/** An error PostgreSQL itself sent is an answer; a timeout or a dropped connection is not. */
export function probeOutcome(status: ServerStatus | undefined, error: unknown): ProbeOutcome {
  if (status) return 'answered';
  return error instanceof pg.DatabaseError ? 'refused' : 'silent';
}

/** The record after one probe of the server run by postmaster `pid` (undefined: not running). */
export function nextPrimaryAnswer(
  previous: PrimaryAnswer | undefined,
  pid: number | undefined,
  outcome: ProbeOutcome,
  isPrimary: boolean,
  now: number,
): PrimaryAnswer | undefined {
  if (pid === undefined) return undefined;
  const same = previous?.pid === pid ? previous : undefined;
  if (outcome === 'answered') return isPrimary ? { pid, at: now } : undefined;
  if (outcome === 'refused') return same && { pid, at: now };
  return same;
}

/** Starting unless this very postmaster answered as primary before; hung once silent for timeoutSeconds (0 disables). */
export function hangVerdict(last: PrimaryAnswer | undefined, pid: number | undefined, now: number, timeoutSeconds: number): HangVerdict {
  if (!last || last.pid !== pid || timeoutSeconds <= 0) return { kind: 'starting' };
  const silentSeconds = Math.max(0, (now - last.at) / 1000);
  return { kind: silentSeconds >= timeoutSeconds ? 'hung' : 'waiting', silentSeconds };
}

/** How often the leader's heartbeat asks its server (primary-heartbeat.ts). */
export const heartbeatIntervalMs = 1000;
/** How long the fence waits for the killed processes to go before the lock is released regardless. */
export const fenceWaitMs = 2000;
/** A replica's race once the lock is free: peers asked within 2 s, then lease write and promotion. */
const raceAndPromoteMs = 4000;
/** Slack for the woken cycle to reach the fence (its cached cluster read, a tick of the heartbeat). */
const cycleSlackMs = 1000;

function requestMsFor(retryTimeout: number): number {
  return Math.max(1000, (retryTimeout * 1000) / 2);
}

/**
 * The hang timeout in force: primary_hang_timeout, but never so long that the fence and the
 * release would come after ttl (a hung primary must not keep the leadership longer than a frozen
 * ha-node would), and never below the setting's minimum (a server slow to accept one connection is
 * not hung). 0 stays 0 (never).
 */
export function effectiveHangTimeout(config: { primary_hang_timeout: number; ttl: number; retry_timeout: number }): number {
  if (config.primary_hang_timeout <= 0) return 0;
  const withinTtl = config.ttl - (fenceWaitMs + requestMsFor(config.retry_timeout) + cycleSlackMs + heartbeatIntervalMs) / 1000;
  return Math.min(config.primary_hang_timeout, Math.max(primaryHangTimeoutRange.min, withinTtl));
}

/**
 * The documented bound from the freeze to a writable replica: the last heartbeat answer came at
 * most one interval before the freeze, silence reaches the timeout in force, the heartbeat wakes the
 * loop, then the fence, the release request, and the replicas' race and promotion.
 */
export function hangTakeoverBoundMs(config: { primary_hang_timeout: number; ttl: number; retry_timeout: number }): number {
  return effectiveHangTimeout(config) * 1000 + heartbeatIntervalMs + cycleSlackMs + fenceWaitMs + requestMsFor(config.retry_timeout) + raceAndPromoteMs;
}
