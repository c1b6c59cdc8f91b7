import type { ClusterView } from '../dcs/types.js';
import type { VolumeUsage } from '../disk/usage.js';
import type { ServerStatus } from '../postgres/status.js';
import type { EffectiveConfig } from './settings.js';
import type { ConfigError, NodeSnapshot, StandbyDemotion } from './snapshot.js';

/**
 * What the HA loop remembers between cycles, and every change made to it. The duty modules read
 * the state freely but change it only through the named updates below, so what can change it, and
 * when, reads from this one file. It imports types only: every module of the loop may import it.
 */

/** The last answer of the local server as primary: which postmaster gave it, and when (performance.now()). */
export interface PrimaryAnswer {
  pid: number;
  at: number;
}

/** A clean release of the leader lock as this member first saw it (release.ts). */
export interface ReleaseSighting {
  version: string;
  checkpoint: number;
  at: number;
}

/** The part of the state the streaming watch keeps (streaming-watch.ts). */
export interface StreamingWatch {
  /** Until when (performance.now()) the loop looks again every second; undefined: not watching. */
  watchStreamingUntil: number | undefined;
}

export interface LoopState extends StreamingWatch {
  config: EffectiveConfig;
  snapshot: NodeSnapshot;
  lastRenewMono: number;
  crashedSince: number | undefined;
  wasRunning: boolean;
  /** The last POST /failsafe from a leader that could not reach the API server. */
  failsafeContact: { name: string; at: number } | undefined;
  /** Where the primary's WAL was when synchronous_standby_names last changed (0 = unknown). */
  syncChangeLsn: number;
  /** Since when this replica follows the current leader without streaming from it. */
  notStreamingSince: number | undefined;
  configDirty: boolean;
  /** Set when this cycle could not reach the API: skip further API writes until the next cycle. */
  dcsUnreachable: boolean;
  /** When this member released the lock because its primary would not start (it sits out the next race). */
  gaveUpLockAt: number | undefined;
  /** When this member stepped down for a switchover (it waits up to ttl for the candidate's lock before it starts). */
  handedOverAt: number | undefined;
  /** The last crash evidence that fell short of a takeover (logged once). */
  lastDisputedEvidence: string | undefined;
  /** The initialize key the data directory was last checked against. */
  checkedSystem: string | undefined;
  /** The last clean release of the leader lock this member saw (see releasedWalFloor). */
  releaseSeen: ReleaseSighting | undefined;
  /** The DCS holds a db.pg_hba with lines PostgreSQL would refuse (logged once, rules in force kept). */
  hbaRefused: boolean;
  /** The local server's last answer as primary (hang-watch.ts judges silence against it). */
  primaryAnswer: PrimaryAnswer | undefined;
  /** When this loop started (performance.now()), for the bootstrap head start of ordinal 0. */
  startedAt: number;
  /** The switchover request this leader waits on for its candidate to stream, and since when (performance.now()). */
  handOverWait: { request: string; since: number } | undefined;
  /** The last switchover this member refused to carry out, published in its member record. */
  switchoverAbort: { at: number; reason: string } | undefined;
  /** The dynamic parameters were screened once since start (parameter-screen.ts). */
  screenedOnce?: boolean;
}

/** The state of a loop that has not run a cycle yet. */
export function initialLoopState(member: Pick<NodeSnapshot, 'name' | 'scope' | 'version' | 'tags'>, config: EffectiveConfig, now: number): LoopState {
  return {
    config,
    snapshot: {
      ...member,
      dbState: 'stopped',
      offlineRole: 'uninitialized',
      isLeader: false,
      failsafeActive: false,
      paused: false,
      dcsLastSeen: 0,
      pendingRestart: false,
      lastLoopAt: now,
      config,
    },
    lastRenewMono: 0,
    crashedSince: undefined,
    wasRunning: false,
    failsafeContact: undefined,
    syncChangeLsn: 0,
    notStreamingSince: undefined,
    configDirty: false,
    dcsUnreachable: false,
    gaveUpLockAt: undefined,
    handedOverAt: undefined,
    lastDisputedEvidence: undefined,
    checkedSystem: undefined,
    releaseSeen: undefined,
    hbaRefused: false,
    primaryAnswer: undefined,
    handOverWait: undefined,
    switchoverAbort: undefined,
    startedAt: now,
    watchStreamingUntil: undefined,
  };
}

// The cycle and the DCS.

/** A cycle begins: the API counts as reachable until a call says otherwise. */
export function cycleStarted(state: LoopState): void {
  state.dcsUnreachable = false;
}

/** The API did not answer this cycle: no further API writes until the next one. */
export function dcsUnreachable(state: LoopState): void {
  state.dcsUnreachable = true;
}

export function clusterRead(state: LoopState, cluster: ClusterView): void {
  state.snapshot.cluster = cluster;
}

/** The volumes' usage measured this cycle (published in the member record, /ha and the metrics). */
export function volumesMeasured(state: LoopState, volumes: VolumeUsage[] | undefined): void {
  state.snapshot.volumes = volumes;
}

/** A cycle ended (performance.now()). */
export function cycleEnded(state: LoopState, at: number): void {
  state.snapshot.lastLoopAt = at;
}

export function lockRenewed(state: LoopState, mono: number): void {
  state.lastRenewMono = mono;
}

/** Whether the members confirmed the failsafe (or the API answered again: false). */
export function failsafeActive(state: LoopState, active: boolean): void {
  state.snapshot.failsafeActive = active;
}

/** POST /failsafe from a leader cut off from the API server. */
export function failsafeContact(state: LoopState, name: string, at: number): void {
  state.failsafeContact = { name, at };
  state.snapshot.failsafeActive = true;
}

// Configuration.

/** The configuration in force from now on (bootstrap: the seed document). */
export function configAdopted(state: LoopState, config: EffectiveConfig): void {
  state.config = config;
}

/** The dynamic configuration of this cycle; `changed` marks the server's files for a rewrite. */
export function dynamicConfigRead(state: LoopState, next: EffectiveConfig, read: { paused: boolean; hbaRefused: boolean; changed: boolean }): void {
  state.hbaRefused = read.hbaRefused;
  state.config = next;
  state.snapshot.paused = read.paused;
  if (read.changed) state.configDirty = true;
}

/** Takes the pending configuration change, if any: true once per change. */
export function takeConfigChange(state: LoopState): boolean {
  if (!state.configDirty) return false;
  state.configDirty = false;
  return true;
}

/** The dynamic parameters were screened: reports whether this was the first time since start. */
export function parametersScreened(state: LoopState): boolean {
  const first = !state.screenedOnce;
  state.screenedOnce = true;
  return first;
}

export function configErrorsFound(state: LoopState, errors: ConfigError[] | undefined): void {
  state.snapshot.configErrors = errors;
}

export function systemChecked(state: LoopState, initialize: string): void {
  state.checkedSystem = initialize;
}

// The local server.

/** What this cycle's status query showed (undefined: the server is down or did not answer). */
export function statusRead(state: LoopState, status: ServerStatus | undefined): void {
  state.snapshot.status = status;
}

export function pendingRestartRead(state: LoopState, pending: { pending: boolean; reason?: NodeSnapshot['pendingRestartReason'] }): void {
  state.snapshot.pendingRestart = pending.pending;
  state.snapshot.pendingRestartReason = pending.pending ? pending.reason : undefined;
}

/** The server answered: it runs, so any crash is over. */
export function serverAnswered(state: LoopState, systemIdentifier: string): void {
  state.snapshot.systemIdentifier = systemIdentifier;
  state.crashedSince = undefined;
}

/** Whether the postmaster ran at this cycle (the next one tells a crash from a stop by it). */
export function runningSeen(state: LoopState, running: boolean): void {
  state.wasRunning = running;
}

/** The role the API reports while the server is down. */
export function offlineRole(state: LoopState, role: NodeSnapshot['offlineRole']): void {
  state.snapshot.offlineRole = role;
}

/** From here on the API must not call us primary, even while PostgreSQL is still stopping. */
export function demoted(state: LoopState): void {
  state.snapshot.status = undefined;
  state.snapshot.offlineRole = 'demoted';
}

export function primaryAnswered(state: Pick<LoopState, 'primaryAnswer'>, answer: PrimaryAnswer | undefined): void {
  state.primaryAnswer = answer;
}

/** The leader's primary is down: since when it has been (the first call of a crash counts). */
export function crashNoticed(state: LoopState, at: number): number {
  state.crashedSince ??= at;
  return state.crashedSince;
}

/** This member let the leader lock go because its primary would not start or hung. */
export function lockGivenUp(state: LoopState, at: number): void {
  state.crashedSince = undefined;
  state.gaveUpLockAt = at;
}

export function demotionRecorded(state: LoopState, demotion: StandbyDemotion): void {
  state.snapshot.demotion = demotion;
}

// Replication and switchover.

export function syncChanged(state: LoopState, lsn: number): void {
  state.syncChangeLsn = lsn;
}

/** This replica does not stream from its leader: since `at`, or since it first noticed (`keep`). */
export function notStreaming(state: LoopState, at: number, keep = false): number {
  state.notStreamingSince = keep ? (state.notStreamingSince ?? at) : at;
  return state.notStreamingSince;
}

export function streaming(state: LoopState): void {
  state.notStreamingSince = undefined;
}

export function streamingWatched(state: StreamingWatch, until: number | undefined): void {
  state.watchStreamingUntil = until;
}

export function handedOver(state: LoopState, at: number | undefined): void {
  state.handedOverAt = at;
}

/** How long this leader has waited on the switchover `request` (its first sighting starts the wait). */
export function handOverWaited(state: LoopState, request: string, now: number): number {
  if (state.handOverWait?.request !== request) state.handOverWait = { request, since: now };
  return now - state.handOverWait.since;
}

export function switchoverRefused(state: LoopState, reason: string, at: number): void {
  state.switchoverAbort = { at, reason };
}

export function disputedEvidenceLogged(state: LoopState, evidence: string): void {
  state.lastDisputedEvidence = evidence;
}

export function releaseSighted(state: LoopState, seen: ReleaseSighting | undefined): void {
  state.releaseSeen = seen;
}
