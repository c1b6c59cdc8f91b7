import type { ClusterView } from '../../dcs/types.js';
import type { ServerStatus } from '../../postgres/status.js';
import type { LoopContext } from '../loop-context.js';

/**
 * Leader duty: spec.roles (the dynamic configuration's `roles`) and the cluster's Database
 * objects are in place. Only on a writable primary, so a standby or restoring cluster applies
 * nothing until it is promoted. The pass runs beside the cycle (one at a time), so a statement
 * that waits never delays the lease renewal; a failure is logged and retried next cycle.
 */
export function keepManagedObjects(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): void {
  const keeper = ctx.options.managed;
  if (!keeper || status.inRecovery) return;
  const identity = `${status.systemIdentifier}/${status.timeline}/${status.postmasterStartTime}`;
  keeper.keepInBackground(
    (database) => ctx.pg.connect(database),
    cluster.config?.roles,
    identity,
    (error) => {
      ctx.options.logger.warn({ err: error.message }, 'could not put the managed roles and databases in place; retrying next cycle');
    },
  );
}
