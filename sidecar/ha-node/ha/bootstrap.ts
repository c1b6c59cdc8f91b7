import type { ClusterView } from '../dcs/types.js';
import { keepAppOwner } from './app-owner-upkeep.js';
import { bootstrapDeferral } from './bootstrap-order.js';
import { leaderAddress, renewed, scheduleSoon, setFence, type LoopContext } from './loop-context.js';
import { watchForStreaming } from './streaming-watch.js';
import { initialDynamicConfig, noFailover } from './settings.js';

/** No data directory yet: create the cluster (initdb, first leader) or clone a replica from the leader. */
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
    if (!(await dcs.takeInitialize())) return 'waiting: another member is bootstrapping';
    try {
      await pg.initdb();
      pg.dynamicParameters = state.config.parameters;
      pg.writeConfig(undefined, false);
      if (!(await pg.start(60))) throw new Error('PostgreSQL did not start after initdb');
      await pg.createRoles();
      const status = await pg.status();
      await keepAppOwner(ctx, status);
      if (!(await dcs.attemptToAcquireLeader(status.location))) throw new Error('could not take the leader lease after bootstrap');
      renewed(ctx);
      await dcs.setConfig(initialDynamicConfig(state.config), { onlyIfMissing: true });
      await dcs.setInitialize(status.systemIdentifier);
      state.snapshot.offlineRole = 'primary';
      return 'initialized a new cluster';
    } catch (error) {
      ctx.options.logger.error({ err: (error as Error).message }, 'bootstrap failed; giving the initialize key back');
      await pg.stop('immediate');
      pg.removeDataDirectory();
      pg.state = 'initdb_failed';
      await dcs.setInitialize(undefined).catch(() => undefined);
      return 'bootstrap failed';
    }
  }
  const leader = leaderAddress(cluster);
  if (!leader || leader.name === ctx.options.name) return 'waiting for the leader to bootstrap';
  setFence(ctx, 0);
  pg.dynamicParameters = state.config.parameters;
  await pg.basebackup(leader);
  pg.writeConfig(leader, true);
  await pg.start(60);
  state.snapshot.offlineRole = 'replica';
  watchForStreaming(state, performance.now());
  return `created a replica from ${leader.name}`;
}
