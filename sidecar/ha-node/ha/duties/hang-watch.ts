import type { ClusterView } from '../../dcs/types.js';
import { killServerTree } from '../../fence/kill-server.js';
import type { ServerStatus } from '../../postgres/status.js';
import { effectiveHangTimeout, fenceWaitMs, hangVerdict, nextPrimaryAnswer, probeOutcome } from '../watches/hang-rules.js';
import { keepLockWhileStarting } from './leader-duties.js';
import { markDemoted, setFence, type LoopContext } from '../loop-context.js';
import { lockGivenUp, primaryAnswered } from '../state.js';

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

/** Records what this cycle's status probe showed (call once per cycle while the server runs). */
export function noteProbe(ctx: LoopContext, status: ServerStatus | undefined, error: unknown): void {
  const { pg, state } = ctx;
  primaryAnswered(
    state,
    nextPrimaryAnswer(state.primaryAnswer, pg.postmasterPid(), probeOutcome(status, error), status ? !status.inRecovery : false, performance.now()),
  );
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
  pg.markCrashed();
  primaryAnswered(state, undefined);
  setFence(ctx, 0);
  lockGivenUp(state, performance.now());
  const released = await ctx.dcs.deleteLeader(cluster.leader?.optime).catch(() => false);
  const outcome = released ? 'released the leader lock' : 'could not release the leader lock (it lapses after ttl)';
  return `fenced the hung primary (no answer for ${silent} s, ${killed.length} processes killed); ${outcome}`;
}
