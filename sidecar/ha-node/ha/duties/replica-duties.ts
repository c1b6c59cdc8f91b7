import type { ClusterView, LeaderRecord } from '../../dcs/types.js';
import type { LeaderAddress } from '../../postgres/instance.js';
import type { ServerStatus } from '../../postgres/status.js';
import { leaderAddress, leaderTimeline, markDemoted, type LoopContext } from '../loop-context.js';
import { askPeer } from '../election/peers.js';
import { takeoverOnCrash } from './race.js';
import { watchForStreaming } from '../watches/streaming-watch.js';
import { demoteAndFollow, startAsReplica } from './transitions.js';
import { handedOver, notStreaming, streaming } from '../state.js';

/** Whether PostgreSQL follows another address than the leader's (or none): then it must re-point. */
export function followsElsewhere(current: LeaderAddress | null | undefined, leader: LeaderAddress): boolean {
  return !current || current.host !== leader.host || current.port !== leader.port;
}

/** How long a replica may fail to stream before it asks the leader whether a rewind is due. */
export function notStreamingOverdue(sinceMs: number, nowMs: number, loopWaitSeconds: number): boolean {
  return nowMs - sinceMs > Math.max(5000, 3 * loopWaitSeconds * 1000);
}

/**
 * PostgreSQL runs and another member holds the lock: a primary demotes; a replica takes over early
 * from a crashed leader, re-points at the leader, or rewinds when it cannot stream from it.
 */
export async function followLeader(ctx: LoopContext, cluster: ClusterView, leader: LeaderRecord, status: ServerStatus): Promise<string> {
  const { pg, state } = ctx;
  if (!status.inRecovery) {
    await demoteAndFollow(ctx, leaderAddress(cluster), cluster);
    return `demoted self because ${leader.holder} holds the lock`;
  }
  const takeover = await takeoverOnCrash(ctx, cluster, leader, status);
  if (takeover) return takeover;
  const address = leaderAddress(cluster);
  const current = pg.followingLeader();
  if (address && followsElsewhere(current, address)) {
    await pg.follow(address);
    notStreaming(state, performance.now());
    watchForStreaming(state, performance.now());
    return `now following ${address.name}`;
  }
  if (status.replicationState === 'streaming') {
    streaming(state);
  } else if (address && state.config.use_rewind && leaderTimeline(cluster) > status.timeline) {
    // A replica that received WAL the new leader never had cannot stream from its new
    // timeline: rewind. Only when the leader is up on a newer timeline (a dead leader is not a reason).
    const since = notStreaming(state, performance.now(), true);
    const leaderMember = cluster.members.find((m) => m.name === leader.holder);
    const overdue = notStreamingOverdue(since, performance.now(), state.config.loop_wait);
    const leaderUp = overdue && leaderMember ? await askPeer(leaderMember, 2000, ctx.options.peerTls) : undefined;
    if (leaderUp?.reachable && leaderUp.role === 'primary' && (leaderUp.timeline ?? 0) > status.timeline) {
      streaming(state);
      markDemoted(ctx);
      await pg.stop('fast');
      await startAsReplica(ctx, address, cluster, true);
      return `rewound to follow ${address.name}: it was not streaming`;
    }
  }
  return `no action: I am a replica following ${leader.holder}`;
}

/**
 * Whether a former primary that just stepped down for a switchover keeps its server stopped: until
 * the candidate holds the lock, so that it starts against it (rewound when needed) rather than on
 * its own; the lock's watch event wakes the loop. A candidate that gives the switchover up (it
 * lacks the released WAL, or may not promote) removes the failover key without taking the lock:
 * then this member, which holds that WAL, starts at once and may lead again, instead of leaving
 * the cluster without a leader for ttl seconds. A candidate that never answers: ttl at most.
 */
export function waitsForCandidate(leaderKnown: boolean, failoverPending: boolean, handedOverAt: number | undefined, now: number, ttlSeconds: number): boolean {
  return !leaderKnown && failoverPending && handedOverAt !== undefined && now - handedOverAt < ttlSeconds * 1000;
}

/** PostgreSQL is down and the lock is not ours: start as a replica of the leader (if any). */
export async function startStoppedReplica(ctx: LoopContext, cluster: ClusterView): Promise<string> {
  const leader = leaderAddress(cluster);
  if (waitsForCandidate(Boolean(leader), cluster.failover !== undefined, ctx.state.handedOverAt, performance.now(), ctx.state.config.ttl)) {
    return 'stopped after a switchover: waiting for the candidate to take the leader lock';
  }
  handedOver(ctx.state, undefined);
  await startAsReplica(ctx, leader, cluster);
  return leader ? `started as a replica of ${leader.name}` : 'started as a replica without a leader';
}
