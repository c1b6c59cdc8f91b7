import pg from 'pg';
import type { ClusterView } from '../dcs/types.js';
import { killServerTree } from '../fence/kill-server.js';
import { probeConnectTimeoutMs, probeQueryTimeoutMs } from '../postgres/instance.js';
import type { ServerStatus } from '../postgres/status.js';
import { keepLockWhileStarting } from './leader-duties.js';
import { markDemoted, setFence, type LoopContext } from './loop-context.js';

/**
 * A hung primary: its postmaster exists but the server stops answering (all of PostgreSQL
 * stopped, a wedged postmaster that accepts no new connection, a stuck disk, a frozen VM). A
 * server that answered as primary and then stops answering is hung, not starting: once it has
 * been silent for primary_hang_timeout seconds, the leader kills it and releases the lock so a
 * replica takes over. A postmaster that ha-node (re)started and that has not answered yet is
 * starting (primary_start_timeout governs a crashed primary), and one that answers with an error
 * (starting up, crash recovery, too many connections) is alive: neither counts as silence.
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

/** How long the fence waits for the killed processes to go before the lock is released regardless. */
export const fenceWaitMs = 2000;
/** A replica's race once the lock is free: peers asked within 2 s, then lease write and promotion. */
const raceAndPromoteMs = 4000;

/**
 * The documented bound from the freeze to a writable replica: silence reaches the timeout (from
 * the last answer, at most one cycle before the freeze), the next probe fails within its connect
 * and query bounds after at most loop_wait plus the cycle's two API requests, then the fence, the
 * release request, and the replicas' race and promotion.
 */
export function hangTakeoverBoundMs(config: { primary_hang_timeout: number; loop_wait: number; retry_timeout: number }): number {
  const requestMs = Math.max(1000, (config.retry_timeout * 1000) / 2);
  return (config.primary_hang_timeout + config.loop_wait) * 1000 + probeConnectTimeoutMs + probeQueryTimeoutMs + 3 * requestMs + fenceWaitMs + raceAndPromoteMs;
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
  const verdict = hangVerdict(state.primaryAnswer, pid, performance.now(), state.config.primary_hang_timeout);
  if (cluster.leader?.holder !== options.name || verdict.kind === 'starting') return keepLockWhileStarting(ctx, cluster);
  const silent = Math.round(verdict.silentSeconds);
  if (verdict.kind === 'waiting') return keepLockWhileStarting(ctx, cluster, `PostgreSQL has not answered for ${silent} s`);
  if (state.snapshot.paused) return keepLockWhileStarting(ctx, cluster, 'paused: PostgreSQL hangs but the lock is not released');
  options.logger.warn({ pid, silentSeconds: silent, timeout: state.config.primary_hang_timeout }, 'PostgreSQL is hung: killing it before releasing the leader lock');
  markDemoted(ctx);
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
