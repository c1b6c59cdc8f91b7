import type { ClusterView, MemberRecord } from '../../dcs/types.js';
import type { EffectiveConfig } from '../settings.js';

/** What a peer reported on GET /ha, reduced to what the leader race needs. */
export interface PeerReport {
  name: string;
  reachable: boolean;
  role?: string;
  state?: string;
  walPosition?: number;
  nofailover?: boolean;
  timeline?: number;
  /** Its node document says a volume is full: it could not take writes, so it is no candidate. */
  diskFull?: boolean;
}

export interface SelfFacts {
  name: string;
  walPosition: number;
  timeline: number;
  nofailover: boolean;
  isPrimary: boolean;
  /** A full volume of this member, described; a replica with one never takes the lock. */
  fullVolume?: string;
}

export type RaceVerdict = { ok: true } | { ok: false; reason: string; missingReleasedWal?: true };

/**
 * Whether this member may try to take the leader lock now (Patroni's is_healthiest_node):
 * honours nofailover, a pending manual failover, maximum_lag_on_failover against the last
 * published leader optime, the shutdown checkpoint of a clean release (releasedFloor),
 * check_timeline, synchronous membership, and the peers' reports
 * (a live primary or a peer further ahead stops the race).
 */
export function raceVerdict(self: SelfFacts, cluster: ClusterView, config: EffectiveConfig, peers: PeerReport[], releasedFloor?: number): RaceVerdict {
  // nofailover first: as in Patroni, such a member never takes the lock, even when named.
  if (self.nofailover) return { ok: false, reason: 'tagged nofailover' };
  if (!self.isPrimary && self.fullVolume) return { ok: false, reason: `${self.fullVolume}: a replica with a full volume does not take the lock` };
  // After a clean release even a named candidate needs the old primary's WAL up to its shutdown
  // checkpoint (releasedWalFloor): promoting without it would drop acknowledged commits.
  if (!self.isPrimary && releasedFloor !== undefined && self.walPosition < releasedFloor) {
    return { ok: false, reason: `missing WAL the last leader released (${self.walPosition} < ${releasedFloor})`, missingReleasedWal: true };
  }
  const failover = cluster.failover;
  if (failover?.member) {
    if (failover.member === self.name) return { ok: true };
    // A named candidate that cannot promote (unreachable, nofailover) leaves the race to the others.
    const candidate = peers.find((p) => p.name === failover.member);
    if (candidate?.reachable && !candidate.nofailover && !candidate.diskFull) return { ok: false, reason: `manual failover to ${failover.member} pending` };
  }
  // In synchronous mode only the former leader and the published synchronous standbys may win,
  // and they only compare WAL positions among themselves (an async peer may be further ahead).
  let allowed: Set<string> | undefined;
  if (config.synchronous_mode && cluster.sync) {
    allowed = new Set([...cluster.sync.sync_standby, cluster.sync.leader ?? '']);
    if (!allowed.has(self.name)) return { ok: false, reason: 'not a synchronous standby' };
  }
  // Failsafe mode: only the members the last leader listed may race (they are the ones it asks).
  const failsafe = cluster.leaderRecord?.failsafe;
  if (config.failsafe_mode && failsafe && !(self.name in failsafe)) return { ok: false, reason: 'not in the failsafe member list' };
  const optime = cluster.leaderRecord?.optime;
  if (!self.isPrimary && optime !== undefined && optime - self.walPosition > config.maximum_lag_on_failover) {
    return { ok: false, reason: `my wal position exceeds maximum replication lag (${optime - self.walPosition} bytes)` };
  }
  if (config.check_timeline) {
    const clusterTimeline = clusterTimelineOf(cluster);
    if (clusterTimeline !== undefined && self.timeline < clusterTimeline)
      return { ok: false, reason: `my timeline ${self.timeline} is behind ${clusterTimeline}` };
  }
  for (const peer of peers) {
    if (!peer.reachable || peer.name === self.name) continue;
    if (peer.role === 'primary' && peer.state === 'running') return { ok: false, reason: `primary ${peer.name} is still alive` };
    if (peer.nofailover || peer.diskFull || (allowed && !allowed.has(peer.name))) continue;
    if (peer.walPosition !== undefined && peer.walPosition > self.walPosition) {
      return { ok: false, reason: `${peer.name} is ahead (${peer.walPosition} > ${self.walPosition})` };
    }
  }
  return { ok: true };
}

/** The latest timeline the cluster is known to be on (history length + 1, or the leader's). */
export function clusterTimelineOf(cluster: ClusterView): number | undefined {
  const last = cluster.history.at(-1);
  return last ? last[0] + 1 : undefined;
}

/** The members worth asking during a race: everyone else with an API URL. */
export function otherMembers(cluster: ClusterView, self: string): MemberRecord[] {
  return cluster.members.filter((m) => m.name !== self && m.api_url);
}
