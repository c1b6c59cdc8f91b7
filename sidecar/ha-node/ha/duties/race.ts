import type { ClusterView, LeaderRecord } from '../../dcs/types.js';
import type { PostgresInstance } from '../../postgres/instance.js';
import { parseLsn } from '../../postgres/lsn.js';
import type { ServerStatus } from '../../postgres/status.js';
import { raceAllowed } from '../../ops/loop-decisions.js';
import { quorumVerdict } from '../../ops/quorum-race.js';
import { leaderCrashed, type CrashEvidence } from '../../takeover/evidence.js';
import { otherMembers, raceVerdict, type PeerReport, type SelfFacts } from '../election/election.js';
import { renewed, scheduleSoon, type LoopContext } from '../loop-context.js';
import { askPeer, askPeers } from '../election/peers.js';
import type { PeerApiTls } from '../peer-api.js';
import { releasedWalFloor, releaserHealth, type ReleaserHealth } from '../election/release.js';
import { noFailover } from '../settings.js';
import { walPositionOf } from '../snapshot.js';
import { becomeStandbyLeader } from './standby-duties.js';
import { demoteAndFollow, lockLost, promote } from './transitions.js';
import { disputedEvidenceLogged, releaseSighted } from '../state.js';
import { fullVolume, volumesNow } from '../../disk/usage.js';

/** An early takeover in progress: the lease version judged and the evidence that the holder is gone. */
interface Takeover {
  leader: LeaderRecord;
  evidence: CrashEvidence;
}

/**
 * Early takeover (ADR 0404): the kubelet reports the leader's container dead and neither its
 * PostgreSQL nor its REST API port accepts connections, so no writable primary can exist there
 * and none can come back without a lease write; race now with a CAS on the version judged.
 */
export async function takeoverOnCrash(ctx: LoopContext, cluster: ClusterView, leader: LeaderRecord, status: ServerStatus): Promise<string | undefined> {
  const judge = ctx.options.crashJudge;
  const member = cluster.members.find((m) => m.name === leader.holder);
  if (!judge || !member || !judge.kubeletSaysDead(member)) return undefined;
  const evidence = await judge.evidence(member);
  if (!leaderCrashed(evidence)) {
    // Once per leader and verdict, not every loop until the lease lapses.
    const seen = JSON.stringify([leader.holder, evidence]);
    if (seen !== ctx.state.lastDisputedEvidence) {
      disputedEvidenceLogged(ctx.state, seen);
      ctx.options.logger.info({ leader: leader.holder, evidence }, 'leader pod reported dead but not every source agrees; waiting for the lease to expire');
    }
    return undefined;
  }
  return race(ctx, cluster, status, { leader, evidence });
}

/**
 * Whether a failsafe confirmation from another member, younger than ttl, keeps this replica out of
 * the race. Not once that member has released the lock cleanly (a switchover, a shutdown): it said
 * through the API server itself that it no longer leads, so its last confirmation proves nothing.
 */
export function failsafeHoldsOff(
  contact: { name: string; at: number },
  self: string,
  isPrimary: boolean,
  ttlSeconds: number,
  now: number,
  releasedBy?: string,
): boolean {
  return !isPrimary && contact.name !== self && contact.name !== releasedBy && now - contact.at < ttlSeconds * 1000;
}

/**
 * The named candidate of a switchover lacks the WAL the old primary released. A streaming replica
 * has it before the release (a fast shutdown waits for the walsenders to deliver everything), so
 * allow a moment for a status read from before the release, then hand the choice back to the
 * normal race, where only members holding that WAL (the old primary among them) can win.
 */
async function waitOrGiveUpMissingWal(ctx: LoopContext, reason: string, sinceMs: number): Promise<string> {
  if (sinceMs < MISSING_WAL_SETTLE_MS) {
    scheduleSoon(ctx, 100);
    return `waiting before promoting: ${reason}`;
  }
  await ctx.dcs.setFailover(undefined).catch(() => undefined);
  ctx.options.logger.warn({ reason }, 'gave up the manual failover to me: I lack WAL the old primary released');
  return `gave up the manual failover to me: ${reason}`;
}

/**
 * Whether the old primary of a clean release still runs, asked only when it matters: this member
 * lacks the WAL it released. The named candidate asks no peers, so it asks the releaser alone.
 */
async function releaserAfterCleanRelease(cluster: ClusterView, self: SelfFacts, peers: PeerReport[], tls?: PeerApiTls): Promise<ReleaserHealth> {
  const record = cluster.leaderRecord;
  const name = record?.releasedBy;
  if (!name || name === self.name || record?.releasedCheckpoint === undefined || self.walPosition >= record.releasedCheckpoint) return 'unknown';
  const asked = peers.find((p) => p.name === name);
  if (asked) return releaserHealth(asked);
  const member = cluster.members.find((m) => m.name === name && m.api_url);
  return member ? releaserHealth(await askPeer(member, 2000, tls)) : 'gone';
}

/**
 * A running primary's position for the comparison, read after every peer has answered: it keeps
 * writing while they are asked, and a replica streaming from it has received no more than it had
 * flushed when that replica answered. The position from the start of the cycle would let such a
 * replica look ahead and win against its own primary. Falls back to that position when the
 * server does not answer.
 */
async function flushPositionNow(pg: Pick<PostgresInstance, 'query'>, status: ServerStatus): Promise<number> {
  const rows = await pg.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn').catch(() => []);
  return Math.max(parseLsn(rows[0]?.lsn) ?? 0, walPositionOf(status));
}

/** How long a named candidate waits for WAL it lacks at a clean release before giving the switchover up. */
export const MISSING_WAL_SETTLE_MS = 2000;

export async function race(ctx: LoopContext, cluster: ClusterView, status: ServerStatus, takeover?: Takeover): Promise<string> {
  const { dcs, state, options } = ctx;
  const isPrimary = !status.inRecovery;
  if (!raceAllowed(cluster.config, cluster.failover)) return 'paused: no automatic failover';
  const contact = state.failsafeContact;
  if (
    contact &&
    failsafeHoldsOff(contact, options.name, isPrimary, state.config.ttl, performance.now(), cluster.leader ? undefined : cluster.leaderRecord?.releasedBy)
  ) {
    return `no race: ${contact.name} confirmed it is alive through failsafe`;
  }
  const started = performance.now();
  // The named candidate of a manual failover wins without comparing positions (raceVerdict), so
  // it skips the round trip to the peers; quorum mode and early takeover still need their answers.
  const named = cluster.failover?.member === options.name && cluster.sync?.quorum === undefined && !takeover;
  const peers = named ? [] : await askPeers(otherMembers(cluster, options.name), 2000, options.peerTls);
  const asked = performance.now();
  if (state.gaveUpLockAt !== undefined && started - state.gaveUpLockAt < state.config.ttl * 1000 && peers.some((p) => p.reachable && !p.nofailover)) {
    return 'no race: this member just gave up the lock because its primary did not start';
  }
  const walPosition = isPrimary ? await flushPositionNow(ctx.pg, status) : walPositionOf(status);
  const self = {
    name: options.name,
    walPosition,
    timeline: status.timeline,
    nofailover: noFailover(options.tags),
    isPrimary,
    fullVolume: fullVolume(volumesNow(ctx.pg.settings.dataDir) ?? []),
  };
  const releaser = await releaserAfterCleanRelease(cluster, self, peers, options.peerTls);
  const limits = { ttlSeconds: state.config.ttl, startTimeoutSeconds: state.config.primary_start_timeout };
  const released = releasedWalFloor(cluster, state.releaseSeen, limits, performance.now(), releaser);
  releaseSighted(state, released.seen);
  const general = raceVerdict(self, cluster, state.config, peers, released.floor);
  if (!general.ok && general.missingReleasedWal && cluster.failover?.member === self.name) {
    return waitOrGiveUpMissingWal(ctx, general.reason, released.sinceMs);
  }
  // Quorum commit: also a named candidate must prove it holds every acknowledged commit.
  const verdict = general.ok ? quorumVerdict(self, cluster.sync, peers) : general;
  if (!verdict.ok && general.ok && cluster.failover?.member === self.name) {
    // A named candidate without the quorum proof gives the manual failover up: otherwise every
    // other member keeps waiting for it and nobody leads (the normal race still needs the proof).
    await dcs.setFailover(undefined).catch(() => undefined);
    return `gave up the manual failover to me: ${verdict.reason}`;
  }
  const acquireStartedEpoch = Date.now();
  const acquire = (): Promise<boolean> => (takeover ? dcs.takeOverLeader(takeover.leader, walPosition) : dcs.attemptToAcquireLeader(walPosition));
  if (verdict.ok && (await acquire())) {
    renewed(ctx, acquireStartedEpoch);
    const standby = state.config.standby_cluster;
    if (!isPrimary && standby) {
      await becomeStandbyLeader(ctx, standby);
      if (cluster.failover) await dcs.setFailover(undefined).catch(() => undefined);
      return takeover
        ? `standby leader now: took over the lock of crashed ${takeover.leader.holder}`
        : 'standby leader now: acquired the leader lock of the standby cluster';
    }
    if (!isPrimary) {
      const acquired = performance.now();
      if ((await promote(ctx, cluster, status)) === 'lost') return lockLost(ctx, 'lost the leader lock while promoting');
      options.logger.info(
        {
          askPeersMs: Math.round(asked - started),
          acquireMs: Math.round(acquired - asked),
          promoteMs: Math.round(performance.now() - acquired),
          evidence: takeover?.evidence,
        },
        'won the leader race',
      );
      if (cluster.failover) await dcs.setFailover(undefined).catch(() => undefined);
      return takeover
        ? `promoted self to leader: took over the lock of crashed ${takeover.leader.holder}`
        : 'promoted self to leader by acquiring session lock';
    }
    return 'acquired session lock as a leader';
  }
  if (takeover) return `no early takeover of crashed ${takeover.leader.holder} (${verdict.ok ? 'lock changed' : verdict.reason})`;
  if (isPrimary) {
    await demoteAndFollow(ctx, undefined, cluster);
    return `demoted self: lost the leader race (${verdict.ok ? 'lock taken' : verdict.reason})`;
  }
  return `following a new leader after a failed race (${verdict.ok ? 'lock taken' : verdict.reason})`;
}
