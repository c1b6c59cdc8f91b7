import { MEMBER_SLOTS_TTL_MS } from '../../dcs/member-refresh.js';
import type { ClusterView, MemberRecord } from '../../dcs/types.js';
import type { ServerStatus } from '../../postgres/status.js';
import { keepAppOwner } from './app-owner-upkeep.js';
import { keepManagedObjects } from './managed-upkeep.js';
import { handleDcsError } from './dcs-outage.js';
import { maintainHistory } from '../records/leader-history.js';
import { renewLock, setFence, type LoopContext } from '../loop-context.js';
import { handOverDueFor, handOverWhenStreaming, manualFailoverOnLeader } from './manual-failover.js';
import { keepPoolersOnPrimary } from '../poolers/pooler-handover.js';
import { keepReadOnlyPoolersOnReplicas } from '../poolers/read-only-poolers.js';
import { runSyncUpkeep } from '../sync/sync-upkeep.js';
import { lockLost, promote } from './transitions.js';
import { syncSlots } from '../../postgres/slots.js';
import { crashNoticed, lockGivenUp, syncChanged } from '../state.js';

/** Members heard from within member_slots_ttl: the others' slots are dropped so WAL cannot pile up for ever. */
export function slotMembers(members: MemberRecord[], now: number): string[] {
  return members.filter((m) => now - m.heartbeat < MEMBER_SLOTS_TTL_MS).map((m) => m.name);
}

/** The failsafe list the leader publishes with each renewal (null turns failsafe off). */
export function failsafeList(members: MemberRecord[], failsafeMode: boolean): Record<string, string> | null {
  return failsafeMode ? Object.fromEntries(members.map((m) => [m.name, m.api_url])) : null;
}

/** Seconds a crashed primary gets to start in place: at most ttl/3 and what is left of primary_start_timeout. */
export function restartBudget(ttl: number, primaryStartTimeout: number, spentSeconds: number): number {
  return Math.max(1, Math.min(Math.floor(ttl / 3), Math.ceil(primaryStartTimeout - spentSeconds) || 1));
}

/** PostgreSQL runs and we hold the lock: renew it, promote if still a replica, then upkeep and switchover. */
export async function leadWithLock(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<string> {
  const { pg, state } = ctx;
  const isPrimary = !status.inRecovery;
  // A due switchover goes first: slots, renewal, history and sync upkeep would only delay the clean stop.
  if (isPrimary && handOverDueFor(ctx, cluster)) {
    const step = await handOverWhenStreaming(ctx, cluster, status);
    if (step.final) return step.message;
  }
  // Slots of members silent for longer than member_slots_ttl are dropped so WAL cannot pile up for ever.
  const live = slotMembers(cluster.members, Date.now());
  const slots = isPrimary && state.config.use_slots ? await syncSlots(pg, live).catch(() => undefined) : undefined;
  const failsafe = failsafeList(cluster.members, state.config.failsafe_mode);
  const renewal = await renewLock(ctx, isPrimary ? status.location : undefined, slots, failsafe);
  if (renewal === 'lost') return lockLost(ctx, 'failed to update leader lock in DCS');
  if (renewal === 'unreachable') return handleDcsError(ctx, new Error('leader lease renewal failed'));
  if (!isPrimary) {
    if ((await promote(ctx, cluster, status)) === 'lost') return lockLost(ctx, 'lost the leader lock while promoting');
    return 'promoted self to leader because I had the lock';
  }
  // Every cycle, from the pod cache: a label the promotion could not clear (API hiccup) goes now.
  await ctx.options.clearOtherPrimaryLabels?.().catch(() => undefined);
  await maintainHistory(ctx, cluster, status).catch(() => undefined);
  await keepAppOwner(ctx, status);
  keepManagedObjects(ctx, cluster, status);
  keepPoolersOnPrimary(ctx);
  keepReadOnlyPoolersOnReplicas(ctx, cluster.members, status.location);
  ctx.options.backup?.onPrimary();
  await maintainSync(ctx, cluster, status).catch((error: Error) => ctx.options.logger.warn({ err: error.message }, 'synchronous standby upkeep failed'));
  const manual = await manualFailoverOnLeader(ctx, cluster, status);
  if (manual) return manual;
  return 'no action: I am the leader with the lock';
}

/** Our primary crashed: restart in place (same timeline) while we still hold the lock, or release it. */
export async function restartCrashedPrimary(ctx: LoopContext, cluster: ClusterView): Promise<string> {
  const { pg, state } = ctx;
  const spent = (performance.now() - crashNoticed(state, performance.now())) / 1000;
  // primary_start_timeout 0 means fail over at once instead of restarting (Patroni's semantics).
  if (state.config.primary_start_timeout > 0 && spent <= state.config.primary_start_timeout) {
    const renewal = await renewLock(ctx, undefined);
    if (renewal === 'lost') return lockLost(ctx, 'failed to update leader lock while restarting');
    if (renewal === 'unreachable') return handleDcsError(ctx, new Error('leader lease renewal failed'));
    pg.writeConfig(undefined, false);
    await pg.start(restartBudget(state.config.ttl, state.config.primary_start_timeout, spent));
    return 'restarted the crashed primary in place';
  }
  if (state.snapshot.paused) return 'paused: not releasing the lock of the primary that does not start';
  await ctx.dcs.deleteLeader(cluster.leader?.optime);
  setFence(ctx, 0);
  await ctx.options.setRoleLabel?.('replica');
  lockGivenUp(state, performance.now());
  return 'released the leader lock: the primary did not start within primary_start_timeout';
}

/** Running but not answering SQL (starting, recovering, or not yet judged hung). Hold the lock if we have it. */
export async function keepLockWhileStarting(ctx: LoopContext, cluster: ClusterView, why = 'PostgreSQL is starting'): Promise<string> {
  if (cluster.leader?.holder === ctx.options.name) {
    const renewal = await renewLock(ctx, undefined);
    if (renewal === 'lost') return lockLost(ctx, 'failed to update leader lock');
    if (renewal === 'unreachable') return handleDcsError(ctx, new Error('leader lease renewal failed'));
    return `${why}; keeping the leader lock`;
  }
  return why;
}

async function maintainSync(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<void> {
  syncChanged(
    ctx.state,
    await runSyncUpkeep({
      self: ctx.options.name,
      cluster,
      status,
      config: ctx.state.config,
      dcs: ctx.dcs,
      pg: ctx.pg,
      logger: ctx.options.logger,
      changeLsn: ctx.state.syncChangeLsn,
    }),
  );
}
