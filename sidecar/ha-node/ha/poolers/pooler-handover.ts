import type { PausedPooler, PoolerFleet } from '../../pooler/fleet.js';
import type { LoopContext } from '../loop-context.js';
import type { PromotionProbe } from './promotion-probe.js';

/**
 * The poolers' part of a planned switchover, driven by the old primary (it alone knows the moment
 * its server stops): PAUSE every pooler before the fast stop (bounded; a pooler that cannot pause
 * aborts the switchover), and once the new leader's server answers as a primary, point every
 * pooler at it and RESUME. Clients only wait; none sees an error. See docs/adr/0801.
 */

/** Longest a pooler stays paused when nobody resumes it (the pooler enforces it on its own). */
export function pauseHoldMs(ttlSeconds: number): number {
  return Math.max(10_000, ttlSeconds * 1000);
}

export type PoolerPause = { ok: true; poolers: PausedPooler[] } | { ok: false; reason: string };

/** The primary's alignment of the poolers still under way, per fleet (one at a time). */
const aligning = new WeakMap<PoolerFleet, Promise<void>>();

/**
 * Run by the primary every cycle, in the background (a slow pooler never delays the cycle): points
 * every pooler that is elsewhere at this primary. A pooler pod that (re)started points at the -rw
 * Service, which lags behind a switchover and needs cluster DNS; this catches it up in a cycle.
 */
export function keepPoolersOnPrimary(ctx: LoopContext): void {
  const fleet = ctx.options.poolers;
  if (!fleet?.configured || aligning.has(fleet)) return;
  const { connectHost, port } = ctx.pg.settings;
  const run = fleet
    .alignTargets(connectHost, port)
    .then((moved) => {
      if (moved > 0) ctx.options.logger.info({ moved, host: connectHost, port }, 'pointed poolers at this primary');
    })
    .catch((error: Error) => ctx.options.logger.warn({ err: error.message }, 'could not check the poolers'))
    .finally(() => aligning.delete(fleet));
  aligning.set(fleet, run);
}

export async function pausePoolers(ctx: LoopContext): Promise<PoolerPause | undefined> {
  const fleet = ctx.options.poolers;
  if (!fleet?.configured) return undefined;
  // An alignment still in flight must not land after the new primary's retarget.
  await aligning.get(fleet);
  const result = await fleet.pauseAll(ctx.options.poolerPauseTimeoutMs ?? 5000, pauseHoldMs(ctx.state.config.ttl));
  if (!result.ok) return result;
  ctx.options.logger.info({ paused: result.paused.length }, 'poolers paused for the switchover');
  return { ok: true, poolers: result.paused };
}

/** How long each step after the stop took (ms), for the switchover's log line. */
export interface PromotionTimings {
  /** From the lock's release until this member saw the new leader take writes. */
  promotionMs: number;
  /** The slowest pooler's retarget (ini rewrite and RELOAD). */
  repointMs: number;
  /** The slowest pooler's RESUME. */
  resumeMs: number;
}

/**
 * Waits (polling every 20 ms, within the pause hold time) for the new primary, then retargets and
 * resumes the paused poolers. When no new primary appears in time they are resumed as they are.
 */
export async function followPromotion(ctx: LoopContext, poolers: PausedPooler[], probe: PromotionProbe): Promise<PromotionTimings | undefined> {
  const fleet = ctx.options.poolers;
  if (!fleet || poolers.length === 0) return undefined;
  const startedAt = performance.now();
  const deadline = Date.now() + pauseHoldMs(ctx.state.config.ttl) - 1000;
  try {
    while (Date.now() < deadline) {
      const leader = await probe.promotedLeader();
      if (leader) {
        const promotionMs = performance.now() - startedAt;
        const { repointMs, resumeMs } = await fleet.retargetAndResume(poolers, leader.host, leader.port);
        ctx.options.logger.info({ host: leader.host, port: leader.port, poolers: poolers.length }, 'poolers point at the new primary and resumed');
        return { promotionMs, repointMs, resumeMs };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await probe.close();
  }
  ctx.options.logger.warn('no new primary in time; resuming the poolers unchanged');
  await fleet.resumeAll(poolers);
  return undefined;
}
