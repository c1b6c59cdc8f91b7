import type { ClusterView, MemberTags } from '../dcs/types.js';
import type { DbState } from '../postgres/state.js';
import type { ServerStatus } from '../postgres/status.js';
import type { EffectiveConfig } from './settings.js';
import type { VolumeUsage } from '../disk/usage.js';

/** Everything the REST API and metrics show about this member, refreshed by the HA loop. */
export interface NodeSnapshot {
  name: string;
  scope: string;
  version: string;
  tags: MemberTags;
  dbState: DbState | 'unknown';
  /** Present while the server runs and answered the last status query. */
  status?: ServerStatus;
  /** Role when the server is down: 'uninitialized' before bootstrap, 'demoted' after losing the lock. */
  offlineRole: 'uninitialized' | 'demoted' | 'replica' | 'primary';
  /** This member holds the leader lock (not expired). */
  isLeader: boolean;
  cluster?: ClusterView;
  failsafeActive: boolean;
  paused: boolean;
  /** Epoch seconds of the last successful DCS call. */
  dcsLastSeen: number;
  systemIdentifier?: string;
  pendingRestart: boolean;
  pendingRestartReason?: Record<string, { old_value: string; new_value: string }>;
  /** performance.now() when the HA loop last finished a cycle. */
  lastLoopAt: number;
  /** When a long step of the cycle in progress (a PostgreSQL tool running) last showed progress (monotonic ms). */
  lastProgressAt?: number;
  config: EffectiveConfig;
  /**
   * Set when this member stopped as primary to become a standby leader: where its history ends.
   * A cluster about to promote in its place must have replayed past checkpointLocation.
   */
  demotion?: StandbyDemotion;
  /** Parameter values kept out of postgresql.conf (ha-node) or not applied by the server (postgresql). */
  configErrors?: ConfigError[];
  /** Usage of the data (and WAL) volume, measured once per loop cycle. */
  volumes?: VolumeUsage[];
}

export interface ConfigError {
  parameter?: string;
  source: 'ha-node' | 'postgresql';
  error: string;
}

export interface StandbyDemotion {
  systemIdentifier: string;
  timeline: number;
  /** Start of the shutdown checkpoint record (bytes). */
  checkpointLocation: number;
  at: string;
}

export function walPositionOf(status: ServerStatus | undefined): number {
  if (!status) return 0;
  if (!status.inRecovery) return status.location ?? 0;
  return Math.max(status.receivedLocation ?? 0, status.replayedLocation ?? 0);
}

/** The lock holder of a standby cluster while its server replays: it follows the remote source. */
export function isStandbyLeader(status: ServerStatus | undefined, holdsLock: boolean, config: Pick<EffectiveConfig, 'standby_cluster'>): boolean {
  return holdsLock && status?.inRecovery === true && config.standby_cluster !== undefined;
}

/** The role name shown in the node document. */
export function roleOf(snapshot: NodeSnapshot): string {
  const status = snapshot.status;
  if (status) return !status.inRecovery ? 'primary' : isStandbyLeader(status, snapshot.isLeader, snapshot.config) ? 'standby_leader' : 'replica';
  return snapshot.offlineRole;
}

/** Listed in the sync key of synchronous mode on/strict (a key with a quorum belongs to quorum mode). */
export function isSyncStandby(snapshot: NodeSnapshot): boolean {
  const sync = snapshot.cluster?.sync;
  return Boolean(sync?.sync_standby.includes(snapshot.name)) && sync?.quorum === undefined && roleOf(snapshot) === 'replica';
}

/** A voter of quorum commit (listed in a sync key that carries a quorum). */
export function isQuorumStandby(snapshot: NodeSnapshot): boolean {
  const sync = snapshot.cluster?.sync;
  return Boolean(sync?.sync_standby.includes(snapshot.name)) && sync?.quorum !== undefined && roleOf(snapshot) === 'replica';
}
