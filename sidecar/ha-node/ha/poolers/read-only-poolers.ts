import type { MemberRecord } from '../../dcs/types.js';
import type { PoolerFleet } from '../../pooler/fleet.js';
import type { LoopContext } from '../loop-context.js';

/**
 * The read-only poolers (`<cluster>-pooler-ro`), kept by the primary every cycle: each points at a
 * replica that streams within maximum_lag_on_failover, spread across them, or at the primary when
 * none does. Never paused: a switchover only changes which members qualify, and the new primary's
 * first cycles move any read-only pooler that still points at it (or at a member gone) back to a
 * replica. Needs no DNS: the addresses are the members' own. See docs/adr/0801.
 */

export interface Endpoint {
  host: string;
  port: number;
}

/** What the primary knows of the cluster when it picks the read-only poolers' targets. */
export interface ReplicaView {
  members: MemberRecord[];
  leaderName: string;
  /** The primary's WAL position now (bytes); undefined: lag is not judged. */
  primaryLocation?: number;
  maxLagBytes: number;
  /** Members whose record is older than this (epoch ms) are left out: they may be gone. */
  freshSince: number;
}

const key = (e: Endpoint) => `${e.host}:${e.port}`;

/** Replicas fit to serve reads: streaming, recently heard from, within the lag bound, not tagged noloadbalance. Sorted by address. */
export function readableReplicas(view: ReplicaView): Endpoint[] {
  return view.members
    .filter(
      (m) =>
        m.name !== view.leaderName && m.role === 'replica' && m.replication_state === 'streaming' && m.heartbeat >= view.freshSince && !m.tags.noloadbalance,
    )
    .filter((m) => view.primaryLocation === undefined || m.xlog_location === undefined || view.primaryLocation - m.xlog_location <= view.maxLagBytes)
    .map((m) => ({ host: m.host, port: m.port }))
    .sort((a, b) => key(a).localeCompare(key(b)));
}

/**
 * The moves that bring every read-only pooler (control URL → its target now, undefined when it
 * did not answer) to a readable replica, spread evenly, or to the primary when there is none. A
 * pooler already on a replica stays there while that replica carries no more than its share, so a
 * pooler is only moved (a RELOAD, its server connections recycled) when it must be.
 */
export function readOnlyMoves(current: Map<string, Endpoint | undefined>, replicas: Endpoint[], primary: Endpoint): Map<string, Endpoint> {
  const moves = new Map<string, Endpoint>();
  const urls = [...current.keys()].filter((url) => current.get(url) !== undefined).sort();
  if (replicas.length === 0) {
    for (const url of urls) if (key(current.get(url)!) !== key(primary)) moves.set(url, primary);
    return moves;
  }
  const share = Math.ceil(urls.length / replicas.length);
  const load = new Map(replicas.map((r) => [key(r), 0]));
  const unplaced: string[] = [];
  for (const url of urls) {
    const at = key(current.get(url)!);
    const count = load.get(at);
    if (count !== undefined && count < share) load.set(at, count + 1);
    else unplaced.push(url);
  }
  for (const url of unplaced) {
    const least = replicas.reduce((best, r) => (load.get(key(r))! < load.get(key(best))! ? r : best));
    load.set(key(least), load.get(key(least))! + 1);
    moves.set(url, least);
  }
  return moves;
}

/** The alignment still under way, per fleet (one at a time, so a slow pooler never piles calls up). */
const aligning = new WeakMap<PoolerFleet, Promise<void>>();

/** Run by the primary each cycle, in the background: a slow or missing pooler never delays the cycle. */
export function keepReadOnlyPoolersOnReplicas(ctx: LoopContext, members: MemberRecord[], primaryLocation: number | undefined): void {
  const fleet = ctx.options.readOnlyPoolers;
  if (!fleet?.configured || aligning.has(fleet)) return;
  const { connectHost, port } = ctx.pg.settings;
  const { config } = ctx.state;
  const replicas = readableReplicas({
    members,
    leaderName: ctx.options.name,
    primaryLocation,
    maxLagBytes: config.maximum_lag_on_failover,
    freshSince: Date.now() - config.ttl * 1000,
  });
  const run = (async () => {
    const reports = await fleet.states();
    const current = new Map(reports.map((r) => [r.url, r.answered ? r.target : undefined]));
    const moves = readOnlyMoves(current, replicas, { host: connectHost, port });
    await Promise.all([...moves].map(([url, to]) => fleet.pointAt(url, to.host, to.port)));
    if (moves.size > 0) ctx.options.logger.info({ moves: Object.fromEntries([...moves].map(([url, to]) => [url, key(to)])) }, 'pointed read-only poolers');
  })()
    .catch((error: Error) => ctx.options.logger.warn({ err: error.message }, 'could not check the read-only poolers'))
    .finally(() => aligning.delete(fleet));
  aligning.set(fleet, run);
}
