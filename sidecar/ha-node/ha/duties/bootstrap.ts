import { cloneReplica } from '../../backup/replica-restore.js';
import { restoreFromRepository } from '../../backup/restore.js';
import type { ClusterView } from '../../dcs/types.js';
import type { PostgresInstance } from '../../postgres/instance.js';
import { keepAppOwner } from './app-owner-upkeep.js';
import { bootstrapDeferral } from './bootstrap-order.js';
import { leaderAddress, renewed, scheduleSoon, setFence, type LoopContext } from '../loop-context.js';
import { watchForStreaming } from '../watches/streaming-watch.js';
import { effectiveConfig, noFailover, seedDynamicConfig } from '../settings.js';
import { walPositionOf } from '../snapshot.js';
import { serverParameters } from '../sync/standby-replies.js';
import { cloneSourceAndStart, describeSource } from './standby-duties.js';
import { createRoles, initdb } from '../../postgres/initialize.js';
import { configAdopted, offlineRole } from '../state.js';

/** A failed restore (bad target, archive in use, unreachable repository) is tried again after this long. */
const restoreRetryMs = 30_000;

/** No data directory yet: create the cluster (initdb or restore, first leader) or clone a replica from the leader. */
export async function bootstrapOrClone(ctx: LoopContext, cluster: ClusterView): Promise<string> {
  const { dcs, pg, state } = ctx;
  if (cluster.initialize === undefined && !cluster.leader) {
    // As in Patroni, a member that may never lead may not create the cluster either: it
    // waits (with every member tagged so, the cluster waits) for an eligible one to bootstrap.
    if (noFailover(ctx.options.tags)) return 'waiting: tagged nofailover, so this member may not bootstrap the cluster';
    const deferral = bootstrapDeferral(ctx.options.name, ctx.options.scope, performance.now() - state.startedAt);
    if (deferral) {
      scheduleSoon(ctx, 1000);
      return deferral;
    }
    const recovery = ctx.options.backup?.engine.config.recovery;
    // A standby recovery restores too, but ends as standby leader (the standby duty's bootstrap).
    const restoring = recovery !== undefined && !recovery.standby;
    const fromRepository = recovery?.standby === true;
    const failed = ctx.options.backup?.restoreFailure();
    if ((restoring || fromRepository) && failed && Date.now() - Date.parse(failed.at) < restoreRetryMs)
      return `waiting: restore from the repository failed (${failed.message}); retrying`;
    if (!(await dcs.takeInitialize())) return 'waiting: another member is bootstrapping';
    try {
      // The first server already runs with the bootstrap document's parameters and client rules.
      const seed = seedDynamicConfig(state.config, ctx.options.bootstrapConfig);
      configAdopted(state, effectiveConfig(ctx.options.baseConfig, seed));
      pg.configure({ dynamic: serverParameters(state.config), hba: state.config.pg_hba });
      const standby = state.config.standby_cluster;
      if (restoring) await restoreFromRepository(pg, ctx.options.backup!.engine, ctx.options.logger);
      else if (standby) await cloneSourceAndStart(pg, standby, fromRepository ? ctx.options.backup!.engine : undefined, ctx.options.logger);
      else if (fromRepository) throw new Error('backup recovery.standby needs standby_cluster in the bootstrap configuration');
      else await initdbAndStart(pg);
      // A standby's copy is read-only and already holds the source's roles.
      if (!standby) await createRoles(pg);
      const status = await pg.status();
      await keepAppOwner(ctx, status);
      // The configuration goes in before the lock: members that start together clone as soon as
      // they see a leader, and must see the parameters they are to run with by then.
      await dcs.setConfig(seed, { onlyIfMissing: true });
      if (!(await dcs.attemptToAcquireLeader(walPositionOf(status)))) throw new Error('could not take the leader lease after bootstrap');
      renewed(ctx);
      await dcs.setInitialize(status.systemIdentifier);
      offlineRole(state, standby ? 'replica' : 'primary');
      if (restoring || fromRepository)
        ctx.options.backup!.recordRestore(true, fromRepository ? 'restored a standby from the repository' : 'restored from the repository');
      if (standby) watchForStreaming(state, performance.now());
      // The members that started with this one clone as soon as they see the lock, and cannot stream
      // before the leader's cycle has made their replication slots: run that cycle now, not a loop_wait later.
      scheduleSoon(ctx, 0);
      return restoring
        ? 'restored a new cluster from the repository'
        : standby
          ? `${fromRepository ? 'restored' : 'cloned'} a standby cluster from ${describeSource(standby)}`
          : 'initialized a new cluster';
    } catch (error) {
      ctx.options.logger.error({ err: (error as Error).message }, 'bootstrap failed; giving the initialize key back');
      if (restoring || fromRepository) ctx.options.backup!.recordRestore(false, (error as Error).message);
      await pg.stop('immediate');
      pg.removeDataDirectory();
      pg.markFailed('initdb_failed');
      await dcs.setInitialize(undefined).catch(() => undefined);
      return restoring || fromRepository ? `restore from the repository failed: ${(error as Error).message}` : 'bootstrap failed';
    }
  }
  const leader = leaderAddress(cluster);
  if (!leader || leader.name === ctx.options.name) return 'waiting for the leader to bootstrap';
  // A replica's parameters must be the cluster's from its first start (max_connections and the
  // like must match the primary's), so it clones only once the configuration is visible.
  if (!cluster.config) {
    scheduleSoon(ctx, 1000);
    return 'waiting for the cluster configuration before cloning';
  }
  setFence(ctx, 0);
  pg.configure({ dynamic: serverParameters(state.config) });
  const source = await cloneReplica(pg, ctx.options.backup?.engine, leader, ctx.options.logger);
  pg.writeConfig(leader, true);
  await pg.start(60);
  offlineRole(state, 'replica');
  watchForStreaming(state, performance.now());
  return `created a replica from ${source}`;
}

async function initdbAndStart(pg: PostgresInstance): Promise<void> {
  await initdb(pg);
  pg.writeConfig(undefined, false);
  if (!(await pg.start(60))) throw new Error('PostgreSQL did not start after initdb');
}
