import type { Logger } from '../../../lib/log.js';
import type { ClusterView, Dcs, DynamicConfig, MemberTags } from '../dcs/types.js';
import { fenceDeadlineFor, writeFenceDeadline } from '../fence/deadline.js';
import type { AppOwnerKeeper } from '../postgres/app-owner.js';
import type { BackupKeeper } from '../backup/keeper.js';
import type { PoolerRoleKeeper } from '../postgres/pooler-role.js';
import type { ManagedKeeper } from '../managed/keeper.js';
import type { PoolerFleet } from '../pooler/fleet.js';
import type { LeaderAddress, PostgresInstance } from '../postgres/instance.js';
import type { PrimaryHeartbeat } from './watches/primary-heartbeat.js';
import type { EffectiveConfig } from './settings.js';
import { demoted, lockRenewed, type LoopState } from './state.js';
import type { LeaderCrashJudge } from '../takeover/judge.js';
import type { PeerApiTls } from './peer-api.js';

export interface HaLoopOptions {
  name: string;
  scope: string;
  version: string;
  apiUrl: string;
  /** How other members' HTTPS APIs are verified (the cluster CA, their names); undefined: as fetch would. */
  peerTls?: PeerApiTls;
  /** Authorization header for calls to other members' authenticated endpoints (POST /failsafe). */
  apiAuthorization?: string;
  tags: MemberTags;
  /** Local defaults for the timers and failover rules (the dynamic configuration overrides them). */
  baseConfig: EffectiveConfig;
  /** Dynamic configuration written to the DCS when this member initialises a new cluster (bootstrap.dcs). */
  bootstrapConfig?: DynamicConfig;
  /** The file the fencing process watches; undefined disables fencing. */
  fenceFile?: string;
  /** Called with the role the pod label should show (best effort). */
  setRoleLabel?: (role: 'primary' | 'replica') => Promise<void>;
  /** Leader only: takes the primary label off every other pod (best effort, ADR 0406). */
  clearOtherPrimaryLabels?: () => Promise<void>;
  /** Gathers crash evidence about the leader pod for an early takeover (ADR 0404); undefined disables it. */
  crashJudge?: Pick<LeaderCrashJudge, 'kubeletSaysDead' | 'evidence'>;
  /** Keeps the application role and database in place on the primary; undefined: none is managed. */
  appOwner?: AppOwnerKeeper;
  /** pgBackRest beside the loop (stanza upkeep, restore bootstrap); undefined: backups are off. */
  backup?: BackupKeeper;
  /** Keeps the pooler's auth_query role and lookup function in place on the primary. */
  poolerRole?: PoolerRoleKeeper;
  /** Keeps spec.roles and the cluster's Database objects in place on the primary; undefined: none. */
  managed?: ManagedKeeper;
  /** The cluster's poolers, paused and retargeted around a planned switchover. */
  poolers?: PoolerFleet;
  /** The read-only poolers: pointed at streaming replicas by the primary, never paused. */
  readOnlyPoolers?: PoolerFleet;
  /** Bound of each pooler's PAUSE; a longer one aborts the switchover. */
  poolerPauseTimeoutMs?: number;
  logger: Logger;
}

/** Everything one duty of the loop acts on: its settings, the DCS, PostgreSQL and the shared state. */
export interface LoopContext {
  readonly options: HaLoopOptions;
  readonly dcs: Dcs;
  readonly pg: PostgresInstance;
  readonly state: LoopState;
  /** The leader's once-a-second question to its own server (hang detection). */
  readonly heartbeat: PrimaryHeartbeat;
  wake(reason?: string): void;
}

export function scheduleSoon(ctx: LoopContext, ms: number): void {
  setTimeout(() => ctx.wake('retry'), ms).unref();
}

export function renewed(ctx: LoopContext, startedEpoch = Date.now()): void {
  lockRenewed(ctx.state, performance.now() - (Date.now() - startedEpoch));
  setFence(ctx, fenceDeadlineFor(startedEpoch, ctx.state.config.ttl));
}

export function setFence(ctx: LoopContext, epochMs: number): void {
  if (!ctx.options.fenceFile) return;
  try {
    writeFenceDeadline(ctx.options.fenceFile, epochMs);
  } catch (error) {
    ctx.options.logger.warn({ err: (error as Error).message }, 'could not write the fence deadline');
  }
}

/** 'lost': someone else holds the lock now; 'unreachable': the API did not answer (retry, failsafe or demote by time). */
export async function renewLock(
  ctx: LoopContext,
  optime: number | undefined,
  slots?: Record<string, number>,
  failsafe?: Record<string, string> | null,
): Promise<'ok' | 'lost' | 'unreachable'> {
  const startedEpoch = Date.now();
  try {
    if (!(await ctx.dcs.updateLeader(optime, slots, failsafe))) return 'lost';
  } catch {
    return 'unreachable';
  }
  renewed(ctx, startedEpoch);
  return 'ok';
}

/** From here on the API must not call us primary, even while PostgreSQL is still stopping. */
export function markDemoted(ctx: LoopContext): void {
  demoted(ctx.state);
}

/** Where this member's PostgreSQL listens, as far as its published records go. */
export interface ListenAddress {
  settings: Pick<PostgresInstance['settings'], 'connectHost' | 'port'>;
}

/** The connection URL this member publishes and sends with failsafe confirmations. */
export function connUrl(pg: ListenAddress): string {
  return `postgres://${pg.settings.connectHost}:${pg.settings.port}/postgres`;
}

/** The timeline of the lock holder when it runs as primary (0 when it does not or is unknown). */
export function leaderTimeline(cluster: ClusterView): number {
  const holder = cluster.leader?.holder;
  const member = cluster.members.find((m) => m.name === holder);
  return member?.role === 'primary' && member.state === 'running' ? (member.timeline ?? 0) : 0;
}

/** Where the lock holder's PostgreSQL listens, from its member record. */
export function leaderAddress(cluster: ClusterView): LeaderAddress | undefined {
  const holder = cluster.leader?.holder;
  if (!holder) return undefined;
  const member = cluster.members.find((m) => m.name === holder);
  if (!member) return undefined;
  return { name: member.name, host: member.host, port: member.port };
}
