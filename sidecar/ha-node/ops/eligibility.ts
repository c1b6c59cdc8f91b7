import type { ClusterView, MemberRecord } from '../dcs/types.js';
import type { PeerReport } from '../ha/election/election.js';
import { clusterTimelineOf } from '../ha/election/election.js';
import type { FailoverRequest } from './failover-request.js';
import { reply, type Reply } from './texts.js';

/** The dynamic settings the checks read. */
export interface EligibilityConfig {
  synchronousMode: 'off' | 'on' | 'quorum';
  maximumLagOnFailover: number;
  checkTimeline: boolean;
}

export type PoolResult = { ok: true; members: MemberRecord[] } | { ok: false; reply: Reply };

/** synchronous_mode as stored (boolean, "on", "off", "quorum") reduced to three values. */
export function synchronousModeOf(value: unknown): EligibilityConfig['synchronousMode'] {
  if (value === 'quorum') return 'quorum';
  return value === true || value === 'on' || value === 'true' ? 'on' : 'off';
}

/**
 * Which members could take over (Patroni's is_failover_possible before the API calls): leader
 * name, synchronous membership (check 6, switchover only, not in quorum mode), existence of the
 * candidate, and that someone besides the leader exists.
 */
export function candidatePool(request: FailoverRequest, cluster: ClusterView, config: EligibilityConfig): PoolResult {
  const action = request.action;
  const holder = cluster.leader?.holder;
  if (request.leader && (!holder || holder !== request.leader)) return fail(412, 'leader name does not match');
  const syncNames = new Set(cluster.sync?.sync_standby ?? []);
  const strictSync = config.synchronousMode === 'on' && action === 'switchover' && Boolean(holder);
  if (request.candidate) {
    // Patroni writes the key and answers "failed" after the wait; say it at once instead.
    if (request.candidate === holder) return fail(412, `${action} is not possible: ${request.candidate} is already the leader`);
    if (strictSync && !syncNames.has(request.candidate)) return fail(412, 'candidate name does not match with sync_standby');
    const member = cluster.members.find((m) => m.name === request.candidate);
    if (!member) return fail(412, 'candidate does not exists');
    return { ok: true, members: [member] };
  }
  if (strictSync) {
    const members = cluster.members.filter((m) => syncNames.has(m.name) && m.name !== holder);
    if (members.length === 0) return fail(412, `${action} is not possible: can not find sync_standby`);
    return { ok: true, members };
  }
  const members = cluster.members.filter((m) => m.name !== holder && m.api_url);
  if (members.length === 0) return fail(412, `${action} is not possible: cluster does not have members except leader`);
  return { ok: true, members };
}

/**
 * Why a member may not take over (checks 1–5), or undefined when it may. Lag and timeline only
 * count while the cluster has a leader: a failover of a leaderless cluster accepts any reachable
 * candidate without nofailover, as the spec allows.
 */
export function ineligibility(peer: PeerReport, cluster: ClusterView, config: EligibilityConfig): string | undefined {
  if (!peer.reachable) return 'not reachable through its API';
  if (peer.nofailover) return 'tagged nofailover';
  if (!cluster.leader) return undefined;
  const leaderPosition = leaderPositionOf(cluster);
  if (leaderPosition !== undefined && peer.walPosition !== undefined && leaderPosition - peer.walPosition > config.maximumLagOnFailover) {
    return `lags ${leaderPosition - peer.walPosition} bytes, more than maximum_lag_on_failover ${config.maximumLagOnFailover}`;
  }
  if (config.checkTimeline) {
    const timeline = clusterTimelineOf(cluster);
    if (timeline !== undefined && peer.timeline !== undefined && peer.timeline < timeline)
      return `timeline ${peer.timeline} is behind the cluster timeline ${timeline}`;
  }
  return undefined;
}

/** The leader's last known WAL position: its published optime or its member record, whichever is newer. */
export function leaderPositionOf(cluster: ClusterView): number | undefined {
  const holder = cluster.leader?.holder;
  const fromMember = cluster.members.find((m) => m.name === holder)?.xlog_location;
  const fromLock = cluster.leaderRecord?.optime;
  if (fromMember === undefined && fromLock === undefined) return undefined;
  return Math.max(fromMember ?? 0, fromLock ?? 0);
}

export type CandidateChoice = { ok: true; candidate: string } | { ok: false; reply: Reply };

/**
 * Picks the member that will take over: the requested candidate if eligible, else the eligible
 * member with the most WAL (ties by name). The 412 body adds one line per refused member.
 */
export function chooseCandidate(request: FailoverRequest, peers: PeerReport[], cluster: ClusterView, config: EligibilityConfig): CandidateChoice {
  const verdicts = peers.map((peer) => ({ peer, reason: ineligibility(peer, cluster, config) }));
  const eligible = verdicts.filter((v) => v.reason === undefined).map((v) => v.peer);
  if (eligible.length === 0) {
    const details = verdicts.map((v) => `${v.peer.name}: ${v.reason}`).join('\n');
    return { ok: false, reply: reply(412, `${request.action} is not possible: no good candidates have been found${details ? `\n${details}` : ''}`) };
  }
  eligible.sort((a, b) => (b.walPosition ?? 0) - (a.walPosition ?? 0) || a.name.localeCompare(b.name));
  return { ok: true, candidate: eligible[0]!.name };
}

function fail(code: number, text: string): PoolResult {
  return { ok: false, reply: reply(code, text) };
}
