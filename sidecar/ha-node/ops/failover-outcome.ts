import type { ClusterView } from '../dcs/types.js';
import { capitalized, reply, type ManualAction, type Reply } from './texts.js';

export interface PendingFailover {
  action: ManualAction;
  /** Leader when the request was accepted (undefined for a leaderless failover). */
  previousLeader?: string;
  candidate: string;
  /** Epoch milliseconds of the request: an abort reason older than this belongs to another one. */
  requestedAt?: number;
}

/**
 * Reads one cluster view after a manual switchover/failover was written: the final reply once a
 * new leader holds the lock, a failure when the failover key vanished without a change of
 * leader, else undefined (keep waiting).
 */
export function failoverOutcome(pending: PendingFailover, cluster: ClusterView): Reply | undefined {
  const holder = cluster.leader?.holder;
  if (holder && holder !== pending.previousLeader) {
    const verb = pending.action === 'switchover' ? 'switched over' : 'failed over';
    if (holder === pending.candidate) return reply(200, `Successfully ${verb} to "${holder}"`);
    const done = pending.action === 'switchover' ? 'Switched over' : 'Failed over';
    return reply(200, `${done} to "${holder}" instead of "${pending.candidate}"`);
  }
  if (!cluster.failover && holder && holder === pending.previousLeader) {
    const aborted = cluster.members.find((m) => m.name === holder)?.switchover_aborted;
    const reason = aborted && aborted.at >= (pending.requestedAt ?? Infinity) ? `: ${aborted.reason}` : '';
    return reply(503, `${capitalized(pending.action)} failed${reason}`);
  }
  return undefined;
}

export function statusUnknown(action: ManualAction, seconds: number): Reply {
  return reply(503, `${capitalized(action)} status unknown after ${seconds} seconds; operation may still be in progress`);
}

/** How long an API call waits for the outcome: 2 * max(10, loop_wait) seconds, as Patroni does. */
export function outcomeTimeoutSeconds(loopWait: number): number {
  return 2 * Math.max(10, Math.ceil(loopWait));
}
