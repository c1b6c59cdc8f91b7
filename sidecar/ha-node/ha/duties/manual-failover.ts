import type { ClusterView } from '../../dcs/types.js';
import type { ServerStatus } from '../../postgres/status.js';
import { manualFailoverTiming } from '../../ops/loop-decisions.js';
import { markDemoted, scheduleSoon, setFence, type LoopContext } from '../loop-context.js';
import { followPromotion, pausePoolers } from '../poolers/pooler-handover.js';
import { publish } from '../records/member-record.js';
import { PromotionProbe } from '../poolers/promotion-probe.js';
import { releaseAfterStop } from '../election/release.js';
import { walPositionOf } from '../snapshot.js';
import { handedOver, handOverWaited, switchoverRefused } from '../state.js';
import { replySilenceBoundMs } from '../sync/standby-replies.js';
import { candidateStreamWaitMs, handOverGate, streamingStandbys } from './handover-gate.js';

/**
 * A failover key seen by the leader: step down now (switchover to the named member, or to any
 * eligible member when none is named), later (scheduled_at), or clean up a key that is stale,
 * names ourselves as the target, or names another leader.
 */
export async function manualFailoverOnLeader(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<string | undefined> {
  const { dcs, state } = ctx;
  const failover = cluster.failover;
  if (!failover) return undefined;
  const self = ctx.options.name;
  if (failover.member === self || (failover.leader && failover.leader !== self) || (!failover.member && !failover.leader)) {
    await dcs.setFailover(undefined);
    return undefined;
  }
  const timing = manualFailoverTiming(failover, new Date(), state.config.loop_wait, state.snapshot.paused);
  if (timing.kind === 'stale') {
    await dcs.setFailover(undefined);
    return 'removed a stale scheduled switchover';
  }
  if (timing.kind === 'wait') {
    scheduleSoon(ctx, Math.min(timing.ms, state.config.loop_wait * 1000));
    return `switchover to ${failover.member ?? 'any member'} scheduled at ${failover.scheduled_at}`;
  }
  if (failover.member && !cluster.members.some((m) => m.name === failover.member)) {
    await dcs.setFailover(undefined);
    return `removed a switchover to unknown member ${failover.member}`;
  }
  const step = await handOverWhenStreaming(ctx, cluster, status);
  return step.message;
}

/**
 * The leader's side of a due switchover: hand over once a member that may take over streams from
 * this primary (handover-gate.ts), look again shortly while it does not, refuse once the wait is
 * over. `final` tells the caller whether this cycle ends here.
 */
export async function handOverWhenStreaming(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<{ final: boolean; message: string }> {
  const candidate = cluster.failover?.member;
  const config = ctx.state.config;
  const waited = handOverWaited(ctx.state, JSON.stringify(cluster.failover ?? {}), performance.now());
  const streaming = streamingStandbys(status.replication, replySilenceBoundMs(config));
  const gate = handOverGate(candidate, streaming, cluster.members, waited, candidateStreamWaitMs(config.ttl));
  if (gate.kind === 'go') return { final: true, message: await handOver(ctx, cluster, candidate ?? 'any eligible member') };
  if (gate.kind === 'refuse') return { final: true, message: await abortSwitchover(ctx, gate.reason) };
  scheduleSoon(ctx, 500);
  return { final: false, message: `switchover waits: ${gate.reason}` };
}

/** Whether the leader self should hand over now: a failover key naming a known member, for us, due. */
export function handOverDue(cluster: ClusterView, self: string, loopWait: number, paused: boolean, now = new Date()): boolean {
  const failover = cluster.failover;
  if (cluster.leader?.holder !== self || !failover?.member || failover.member === self) return false;
  if (failover.leader && failover.leader !== self) return false;
  if (!cluster.members.some((m) => m.name === failover.member)) return false;
  return manualFailoverTiming(failover, now, loopWait, paused).kind === 'now';
}

/** handOverDue for this loop's member, timers and pause state. */
export function handOverDueFor(ctx: LoopContext, cluster: ClusterView): boolean {
  return handOverDue(cluster, ctx.options.name, ctx.state.config.loop_wait, ctx.state.snapshot.paused);
}

/**
 * Switchover: stop cleanly, release the lock with the shutdown checkpoint's position (the
 * candidate must hold WAL up to it before promoting); the loop then follows the candidate. With
 * poolers, one log line gives each step's time: together they are the clients' stall.
 */
export async function handOver(ctx: LoopContext, cluster: ClusterView, candidate: string): Promise<string> {
  const startedAt = performance.now();
  const probe = new PromotionProbe(ctx);
  // The connection that watches the candidate's promotion opens while the poolers pause.
  const [paused] = await Promise.all([pausePoolers(ctx), ctx.options.poolers?.configured ? probe.prepare(cluster, candidate) : undefined]);
  if (paused && !paused.ok) {
    await probe.close();
    return abortSwitchover(ctx, paused.reason);
  }
  const pausedAt = performance.now();
  const status = await ctx.pg.status().catch(() => undefined);
  markDemoted(ctx);
  await ctx.pg.stop('fast');
  const stoppedAt = performance.now();
  await releaseAfterStop(ctx.pg, ctx.dcs, walPositionOf(status));
  const releasedAt = performance.now();
  const releasedAtEpoch = Date.now();
  setFence(ctx, 0);
  handedOver(ctx.state, performance.now());
  // The label write and the wait for the new primary overlap: the paused clients wait for neither twice.
  const [after] = await Promise.all([paused ? followPromotion(ctx, paused.poolers, probe) : undefined, ctx.options.setRoleLabel?.('replica')]);
  if (paused) {
    const ms = (value: number) => Math.round(value);
    ctx.options.logger.info(
      {
        candidate,
        releasedAt: new Date(releasedAtEpoch).toISOString(),
        pauseMs: ms(pausedAt - startedAt),
        stopMs: ms(stoppedAt - pausedAt),
        releaseMs: ms(releasedAt - stoppedAt),
        promotionMs: after && ms(after.promotionMs),
        repointMs: after && ms(after.repointMs),
        resumeMs: after && ms(after.resumeMs),
        totalMs: ms(performance.now() - startedAt),
      },
      'switchover phases',
    );
  }
  await probe.close();
  return `stepped down for a switchover to ${candidate}`;
}

/**
 * A switchover that cannot go ahead safely (a pooler could not pause): the reason goes into this
 * member's record, where the waiting API call reads it, before the failover key is removed.
 */
async function abortSwitchover(ctx: LoopContext, reason: string): Promise<string> {
  switchoverRefused(ctx.state, reason, Date.now());
  await publish(ctx);
  await ctx.dcs.setFailover(undefined);
  ctx.options.logger.warn({ reason }, 'switchover aborted; this member stays primary');
  return `switchover aborted: ${reason}`;
}
