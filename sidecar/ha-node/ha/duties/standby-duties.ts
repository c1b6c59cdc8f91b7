import type { ClusterView } from '../../dcs/types.js';
import type { LeaderAddress, PostgresInstance } from '../../postgres/instance.js';
import { formatLsn } from '../../postgres/lsn.js';
import type { ServerStatus } from '../../postgres/status.js';
import { sameSource, sourcePort, type StandbySource } from '../../postgres/standby-source.js';
import { handleDcsError } from './dcs-outage.js';
import { failsafeList, slotMembers } from './leader-duties.js';
import { markDemoted, renewLock, type LoopContext } from '../loop-context.js';
import { publish } from '../records/member-record.js';
import { manualFailoverOnLeader } from './manual-failover.js';
import { walPositionOf } from '../snapshot.js';
import { watchForStreaming } from '../watches/streaming-watch.js';
import { lockLost } from './transitions.js';
import { syncSlots } from '../../postgres/slots.js';
import { cloneFrom } from '../../postgres/clone.js';
import type { PgBackRest } from '../../backup/engine.js';
import { restoreSourceBackup } from '../../backup/restore.js';
import type { Logger } from '../../../../lib/log.js';
import { demotionRecorded, offlineRole, streaming } from '../state.js';

/**
 * The standby-cluster duty (Patroni's standby_cluster): while the dynamic configuration names a
 * remote source, the lock holder is the standby leader. It follows the source (streaming,
 * restore_command, or both), never promotes, and the other members cascade from it through the
 * ordinary replica duty. Removing the source hands the lock holder back to the leader duty, which
 * promotes it onto a new timeline.
 */

/**
 * Every cycle, on every member: the source repository's configuration (with its credentials) is
 * kept while the dynamic configuration names a source and removed once it does not (promoted).
 * Without a dynamic configuration yet nothing changes: the bootstrap writes it when it restores.
 */
export function keepSourceConfig(ctx: LoopContext, cluster: ClusterView): void {
  const upkeep = ctx.options.backup?.sourceConfig;
  if (!upkeep) return;
  upkeep.follow(ctx.state.config.standby_cluster ? 'standby' : cluster.config ? 'promoted' : 'unknown');
}

/** The remote source as an address PostgreSQL can follow. */
export function remoteAddress(source: StandbySource): LeaderAddress {
  return { name: 'standby_cluster', host: source.host ?? '', port: sourcePort(source), source };
}

/** Whether the server is configured to follow exactly this source (not a member, not another source). */
export function followsSource(current: LeaderAddress | undefined | null, source: StandbySource): boolean {
  return current?.source !== undefined && sameSource(current.source, source);
}

/** A short description for log lines and loop actions (never the credentials). */
export function describeSource(source: StandbySource): string {
  const parts: string[] = [];
  if (source.host !== undefined) parts.push(`${source.host}:${sourcePort(source)}`);
  if (source.restore_command !== undefined) parts.push('restore_command');
  return parts.join(' and ');
}

/** PostgreSQL runs and we hold the lock of a standby cluster: renew, keep the cascade slots, follow the source. */
export async function leadStandby(ctx: LoopContext, cluster: ClusterView, status: ServerStatus, source: StandbySource): Promise<string> {
  const { pg, state } = ctx;
  // Slots for the cascading members live on the standby leader (a physical slot works on a standby).
  const slots = status.inRecovery && state.config.use_slots ? await syncSlots(pg, slotMembers(cluster.members, Date.now())).catch(() => undefined) : undefined;
  const renewal = await renewLock(ctx, walPositionOf(status), slots, failsafeList(cluster.members, state.config.failsafe_mode));
  if (renewal === 'lost') return lockLost(ctx, 'failed to update leader lock in DCS');
  if (renewal === 'unreachable') return handleDcsError(ctx, new Error('leader lease renewal failed'));
  if (!status.inRecovery) return demoteToStandbyLeader(ctx, source);
  if (!followsSource(pg.followingLeader(), source)) {
    await followSource(ctx, source);
    return `now following the remote source ${describeSource(source)} as standby leader`;
  }
  // A switchover hands the standby leadership over as the leader duty hands over a primary's:
  // clean stop, release; the candidate wins the race and follows the source instead of promoting.
  const manual = await manualFailoverOnLeader(ctx, cluster, status);
  if (manual) return manual;
  return `no action: I am the standby leader following ${describeSource(source)}`;
}

/** Our server is down while we hold the lock of a standby cluster: start it again as the standby leader. */
export async function restartStandbyLeader(ctx: LoopContext, source: StandbySource): Promise<string> {
  const renewal = await renewLock(ctx, undefined);
  if (renewal === 'lost') return lockLost(ctx, 'failed to update leader lock while restarting');
  if (renewal === 'unreachable') return handleDcsError(ctx, new Error('leader lease renewal failed'));
  await startFollowingSource(ctx, source);
  return 'restarted the standby leader';
}

/** Won the leader race of a standby cluster: follow the remote source instead of promoting. */
export async function becomeStandbyLeader(ctx: LoopContext, source: StandbySource): Promise<void> {
  await followSource(ctx, source);
  ctx.options.logger.info({ source: describeSource(source) }, 'took the leader lock as standby leader');
}

/**
 * The cluster was made a standby while we ran as its primary: stop cleanly (the shutdown
 * checkpoint is written) and come back, with the lock kept, as standby leader of the source.
 */
async function demoteToStandbyLeader(ctx: LoopContext, source: StandbySource): Promise<string> {
  markDemoted(ctx);
  // A fast stop waits until the walsenders delivered everything, the shutdown checkpoint included.
  await ctx.pg.stop('fast');
  const control = await ctx.pg.controlData();
  if (control?.checkpointLocation !== undefined) {
    demotionRecorded(ctx.state, {
      systemIdentifier: control.systemIdentifier,
      timeline: control.timeline,
      checkpointLocation: control.checkpointLocation,
      at: new Date().toISOString(),
    });
    ctx.options.logger.info({ ...ctx.state.snapshot.demotion, checkpointLsn: formatLsn(control.checkpointLocation) }, 'demoted: the primary stopped cleanly');
    // Published before the restart: the new primary waits for exactly this checkpoint to promote.
    await publish(ctx);
  }
  await startFollowingSource(ctx, source);
  return `demoted to standby leader following ${describeSource(source)}`;
}

async function followSource(ctx: LoopContext, source: StandbySource): Promise<void> {
  await ctx.pg.follow(remoteAddress(source));
  streaming(ctx.state);
  watchForStreaming(ctx.state, performance.now());
  await ctx.options.setRoleLabel?.('primary');
}

async function startFollowingSource(ctx: LoopContext, source: StandbySource): Promise<void> {
  ctx.pg.writeConfig(remoteAddress(source), true);
  await ctx.pg.start(60);
  offlineRole(ctx.state, 'replica');
  watchForStreaming(ctx.state, performance.now());
}

/**
 * The first member of a standby cluster: a copy of the source instead of initdb, by streaming
 * (pg_basebackup) or, given the engine of a standby recovery, the newest backup in the source's
 * repository. Roles and the application database come with the copy (read-only until promoted).
 */
export async function cloneSourceAndStart(pg: PostgresInstance, source: StandbySource, repository?: PgBackRest, logger?: Logger): Promise<void> {
  if (repository && logger)
    await restoreSourceBackup(
      pg,
      repository,
      logger,
      source.host === undefined
        ? undefined
        : { host: source.host, port: sourcePort(source), ...(source.server_name ? { server_name: source.server_name } : {}) },
    );
  else if (source.host === undefined)
    throw new Error('standby_cluster has no host: without a repository to restore from, a standby cluster is cloned from its source by streaming');
  else await cloneFrom(pg, remoteAddress(source));
  pg.writeConfig(remoteAddress(source), true);
  if (!(await pg.start(60))) throw new Error('PostgreSQL did not start after cloning the source');
}
