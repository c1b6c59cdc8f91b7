import type { ClusterView, HistoryEntry } from '../../dcs/types.js';
import type { ServerStatus } from '../../postgres/status.js';
import type { LoopContext } from '../loop-context.js';
import { readTimelineHistory } from './timeline-history.js';

/**
 * The DCS history for the primary's timeline history lines: entries the DCS already holds stay
 * as they are, new ones are stamped with now and this member; only the last 100 are kept.
 */
export function historyEntries(known: HistoryEntry[], lines: [number, number, string][], self: string, now: Date): HistoryEntry[] {
  const entries = lines.map(([tl, lsn, reason]) => {
    const existing = known.find((h) => h[0] === tl);
    return existing ?? ([tl, lsn, reason, now.toISOString(), self] as [number, number, string, string, string]);
  });
  return entries.slice(-100);
}

/** Whether the DCS history lags the primary's timeline (the history file then needs reading). */
export function historyBehind(known: HistoryEntry[], timeline: number): boolean {
  if (timeline <= 1) return false;
  const last = known.at(-1)?.[0] ?? 0;
  return last < timeline - 1;
}

/** Keeps the DCS history in step with the timeline history files of the primary. */
export async function maintainHistory(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<void> {
  if (!historyBehind(cluster.history, status.timeline)) return;
  const lines = await readTimelineHistory(ctx.pg, status.timeline);
  await ctx.dcs.setHistory(historyEntries(cluster.history, lines, ctx.options.name, new Date()));
}
