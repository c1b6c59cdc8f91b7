import pg from 'pg';
import type { ClusterView } from '../dcs/types.js';
import { killServerTree } from '../fence/kill-server.js';
import type { ServerStatus } from '../postgres/status.js';
import { keepLockWhileStarting } from './leader-duties.js';
import { markDemoted, setFence, type LoopContext } from './loop-context.js';
import { primaryHangTimeoutRange } from './settings.js';

/**
 * A hung primary: its postmaster exists but the server stops answering (all of PostgreSQL
 * stopped, a wedged postmaster that accepts no new connection, a stuck disk, a frozen VM). A
 * server that answered as primary and then stops answering is hung, not starting: once it has
 * been silent for the hang timeout (effectiveHangTimeout: primary_hang_timeout, shortened to fit
 * in ttl), the leader kills it and releases the lock so a replica takes over. The leader's
 * heartbeat (primary-heartbeat.ts) asks every second and wakes the loop when silence reaches the
 * timeout. A postmaster that ha-node (re)started and that has not answered yet is starting
 * (primary_start_timeout governs a crashed primary), and one that answers with an error (starting
 * up, crash recovery, too many connections) is alive: neither counts as silence.
 */

/** The last answer of the local server as primary: which postmaster gave it, and when (performance.now()). */
export interface PrimaryAnswer {
  pid: number;
  at: number;
}

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

/** Records what this cycle's status probe showed (call once per cycle while the server runs). */
export function noteProbe(ctx: LoopContext, status: ServerStatus | undefined, error: unknown): void {
  const { pg, state } = ctx;
  state.primaryAnswer = nextPrimaryAnswer(state.primaryAnswer, pg.postmasterPid(), probeOutcome(status, error), status ? !status.inRecovery : false, performance.now());
}

/** The server runs but did not answer: keep the lock while it may be starting, fence and release once it is hung. */
export async function handleSilentServer(ctx: LoopContext, cluster: ClusterView): Promise<string> {
  const { pg, state, options } = ctx;
  const pid = pg.postmasterPid();
  const timeout = effectiveHangTimeout(state.config);
  const verdict = hangVerdict(state.primaryAnswer, pid, performance.now(), timeout);
  if (cluster.leader?.holder !== options.name || verdict.kind === 'starting') return keepLockWhileStarting(ctx, cluster);
  const silent = Math.round(verdict.silentSeconds);
  if (verdict.kind === 'waiting') return keepLockWhileStarting(ctx, cluster, `PostgreSQL has not answered for ${silent} s`);
  if (state.snapshot.paused) return keepLockWhileStarting(ctx, cluster, 'paused: PostgreSQL hangs but the lock is not released');
  options.logger.warn({ pid, silentSeconds: silent, timeout }, 'PostgreSQL is hung: killing it before releasing the leader lock');
  markDemoted(ctx);
  ctx.heartbeat.stop();
  const { killed, lingering } = await killServerTree(pid!, fenceWaitMs);
  if (lingering.length > 0) options.logger.warn({ lingering }, 'killed PostgreSQL processes have not exited yet (SIGKILL pending)');
  pg.state = 'crashed';
  state.primaryAnswer = undefined;
  setFence(ctx, 0);
  state.gaveUpLockAt = performance.now();
  const released = await ctx.dcs.deleteLeader(cluster.leader?.optime).catch(() => false);
  const outcome = released ? 'released the leader lock' : 'could not release the leader lock (it lapses after ttl)';
  return `fenced the hung primary (no answer for ${silent} s, ${killed.length} processes killed); ${outcome}`;
}
