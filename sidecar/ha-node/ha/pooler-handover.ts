import pg from 'pg';
import type { ClusterView } from '../dcs/types.js';
import type { PausedPooler, PoolerFleet } from '../pooler/fleet.js';
import type { LoopContext } from './loop-context.js';

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

/** The new leader's address once its PostgreSQL takes writes; undefined while it does not yet. */
async function promotedLeader(ctx: LoopContext, cluster: ClusterView): Promise<{ host: string; port: number } | undefined> {
  const holder = cluster.leader?.holder;
  if (!holder || holder === ctx.options.name) return undefined;
  const member = cluster.members.find((m) => m.name === holder);
  if (!member) return undefined;
  const { superuser } = ctx.pg.settings;
  const client = new pg.Client({ host: member.host, port: member.port, user: superuser.username, password: superuser.password, database: 'postgres', connectionTimeoutMillis: 1000, query_timeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
    return rows[0]?.recovery === false ? { host: member.host, port: member.port } : undefined;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Waits (polling every 50 ms, within the pause hold time) for the new primary, then retargets and
 * resumes the paused poolers. When no new primary appears in time they are resumed as they are.
 */
export async function followPromotion(ctx: LoopContext, poolers: PausedPooler[]): Promise<void> {
  const fleet = ctx.options.poolers;
  if (!fleet || poolers.length === 0) return;
  const deadline = Date.now() + pauseHoldMs(ctx.state.config.ttl) - 1000;
  while (Date.now() < deadline) {
    const cluster = await ctx.dcs.getCluster().catch(() => undefined);
    const leader = cluster ? await promotedLeader(ctx, cluster) : undefined;
    if (leader) {
      await fleet.retargetAndResume(poolers, leader.host, leader.port);
      ctx.options.logger.info({ host: leader.host, port: leader.port, poolers: poolers.length }, 'poolers point at the new primary and resumed');
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  ctx.options.logger.warn('no new primary in time; resuming the poolers unchanged');
  await fleet.resumeAll(poolers);
}
