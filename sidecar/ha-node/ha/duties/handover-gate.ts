import type { ClusterView } from '../../dcs/types.js';
import type { ReplicationRow } from '../../postgres/status.js';
import { noFailover } from '../settings.js';
import { repliesInTime } from '../sync/standby-replies.js';

/**
 * A switchover stops the primary only once a member that may take over streams from it. A fast
 * shutdown hands the shutdown checkpoint to the standbys connected at that moment and to no one
 * else: a candidate still reconnecting (right after another switchover, say) would lack it,
 * decline to promote, and leave the cluster without a leader until the old primary came back.
 * The leader waits a bounded time for the stream, then refuses the switchover with the reason.
 */

export type HandOverGate = { kind: 'go' } | { kind: 'wait'; reason: string } | { kind: 'refuse'; reason: string };

/** How long a leader waits for its candidate to stream: within the API's wait for the outcome (at least 20 s). */
export function candidateStreamWaitMs(ttlSeconds: number): number {
  return Math.min(12_000, Math.max(5_000, ttlSeconds * 500));
}

/** The members that stream from this primary now and replied within the bound, by name. */
export function streamingStandbys(replication: readonly ReplicationRow[], replyBoundMs: number): Set<string> {
  return new Set(replication.filter((row) => repliesInTime(row, replyBoundMs)).map((row) => row.application_name));
}

/**
 * Whether the leader may stop now for a switchover to `candidate` (undefined: any member that may
 * take over), having waited `waitedMs` since it first saw this request.
 */
export function handOverGate(
  candidate: string | undefined,
  streaming: ReadonlySet<string>,
  members: ClusterView['members'],
  waitedMs: number,
  limitMs: number,
): HandOverGate {
  const ready = candidate ? streaming.has(candidate) : members.some((m) => streaming.has(m.name) && !noFailover(m.tags));
  if (ready) return { kind: 'go' };
  const who = candidate ?? 'no member that may take over';
  const reason = candidate ? `candidate ${who} does not stream from the primary` : `${who} streams from the primary`;
  if (waitedMs < limitMs) return { kind: 'wait', reason };
  return { kind: 'refuse', reason: `${reason} (waited ${Math.round(waitedMs / 1000)} s)` };
}
