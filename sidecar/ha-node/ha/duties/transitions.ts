import type { ClusterView } from '../../dcs/types.js';
import type { ControlData, LeaderAddress } from '../../postgres/instance.js';
import type { ServerStatus } from '../../postgres/status.js';
import { keepingLease } from '../records/lease-keeper.js';
import { maintainHistory } from '../records/leader-history.js';
import { leaderTimeline, markDemoted, setFence, type LoopContext } from '../loop-context.js';
import { watchForStreaming } from '../watches/streaming-watch.js';
import { dropInactiveSlots } from '../../postgres/slots.js';
import { rewindFrom } from '../../postgres/rewind.js';
import { cloneFrom } from '../../postgres/clone.js';
import { offlineRole, statusRead } from '../state.js';

/** Role changes of the local PostgreSQL: promote, demote (to follow or to serve reads offline), start as a replica. */

/**
 * Promotes the local server. The lease is renewed meanwhile (lease-keeper.ts), so the slow steps
 * after pg_promote (labels, CHECKPOINT, slots, history: each bounded by its query or request
 * timeout) no longer race the fence deadline of the lease write before the promotion.
 * 'lost': a renewal found the lock taken; the caller demotes.
 */
export async function promote(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<'promoted' | 'lost'> {
  const { lost } = await keepingLease(ctx, 'promotion', () => promoteAndFollowUp(ctx, cluster, status));
  return lost ? 'lost' : 'promoted';
}

async function promoteAndFollowUp(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<void> {
  const { pg, state } = ctx;
  // A former primary cut off from the API server still carries the primary label: take it off
  // while PostgreSQL promotes, so -rw stops routing to a read-only server as this one turns writable.
  const clearing = ctx.options.clearOtherPrimaryLabels?.().catch(() => undefined);
  const promoteStartedAt = performance.now();
  await pg.promote();
  ctx.options.logger.info({ promoteMs: Math.round(performance.now() - promoteStartedAt) }, 'PostgreSQL takes writes');
  offlineRole(state, 'primary');
  // The pod label goes out at once (the -rw Service follows it), beside the status read that
  // shows the new role to the health checks: neither waits for the other.
  const labelled = ctx.options
    .setRoleLabel?.('primary')
    .catch((error: unknown) => ctx.options.logger.warn({ err: String(error) }, 'could not set the pod role label'));
  statusRead(state, (await pg.status().catch(() => undefined)) ?? state.snapshot.status);
  // Poolers follow at once, not after the -rw Service does (ADR 0801), nor after the label writes
  // below (API calls, slow on a loaded server); in the background, so an unreachable pooler never
  // delays the new primary's duties.
  if (ctx.options.poolers?.configured) {
    ctx.options.poolers
      .retargetAll(pg.settings.connectHost, pg.settings.port)
      .catch((error: Error) => ctx.options.logger.warn({ err: error.message }, 'could not point the poolers at this primary'));
  }
  await Promise.all([clearing, labelled]);
  // pg_rewind on the old primary needs a checkpoint on the new timeline.
  await pg.query('CHECKPOINT').catch(() => undefined);
  await dropInactiveSlots(pg).catch(() => undefined);
  const after = await pg.status().catch(() => undefined);
  if (after) statusRead(state, after);
  if (after) await maintainHistory(ctx, cluster, after).catch(() => undefined);
  ctx.options.logger.info({ timeline: after?.timeline ?? status.timeline }, 'promoted');
}

export async function demoteAndFollow(ctx: LoopContext, leader: LeaderAddress | undefined, cluster: ClusterView): Promise<void> {
  markDemoted(ctx);
  await ctx.pg.stop('immediate');
  setFence(ctx, 0);
  await ctx.options.setRoleLabel?.('replica');
  await startAsReplica(ctx, leader, cluster, true);
}

/** DCS gone for retry_timeout: stop accepting writes but keep serving reads. */
export async function demoteOffline(ctx: LoopContext): Promise<void> {
  markDemoted(ctx);
  await ctx.pg.stop('fast');
  setFence(ctx, 0);
  ctx.pg.writeConfig(undefined, true);
  await ctx.pg.start(60);
  offlineRole(ctx.state, 'demoted');
  ctx.options.setRoleLabel?.('replica').catch(() => undefined);
}

export async function lockLost(ctx: LoopContext, reason: string): Promise<string> {
  const status = ctx.pg.isRunning() ? await ctx.pg.status().catch(() => undefined) : undefined;
  if (status && !status.inRecovery) await demoteAndFollow(ctx, undefined, ctx.state.snapshot.cluster ?? { history: [], members: [] });
  return `demoted self: ${reason}`;
}

/**
 * Starts a stopped data directory as a replica. A former primary is first rewound against the
 * leader (its timeline may have diverged); when rewind fails the data directory is re-cloned.
 */
/**
 * A stopped replica whose last checkpoint is on an older timeline than the leader's may hold WAL
 * the new leader never received (it streamed the old primary's tail after the candidate had
 * promoted): PostgreSQL then refuses to start ("requested timeline is not a child of this
 * server's history"). pg_rewind settles it either way: it rewinds, or says no rewind is required.
 */
export function replicaMayHaveDiverged(control: ControlData | undefined, leaderTimelineId: number): boolean {
  return control?.state === 'shut down in recovery' && control.timeline > 0 && leaderTimelineId > control.timeline;
}

export async function startAsReplica(ctx: LoopContext, leader: LeaderAddress | undefined, cluster: ClusterView, wasPrimary = false): Promise<void> {
  const { pg, state } = ctx;
  setFence(ctx, 0);
  const control = await pg.controlData();
  const formerPrimary = wasPrimary || control?.state === 'in production' || control?.state === 'shut down';
  if (leader && (formerPrimary || replicaMayHaveDiverged(control, leaderTimeline(cluster))) && state.config.use_rewind) {
    const ok = await rewindFrom(pg, leader).catch((error: Error) => {
      ctx.options.logger.error({ err: error.message }, 'rewind failed');
      return false;
    });
    if (!ok) {
      ctx.options.logger.warn('re-cloning the data directory from the leader');
      await cloneFrom(pg, leader);
    }
  } else if (leader && formerPrimary && !state.config.use_rewind) {
    await cloneFrom(pg, leader);
  }
  pg.writeConfig(leader, true);
  await pg.start(60);
  offlineRole(state, 'replica');
  watchForStreaming(state, performance.now());
  void cluster;
}
