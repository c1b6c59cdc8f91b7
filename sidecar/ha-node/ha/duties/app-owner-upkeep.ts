import type { ServerStatus } from '../../postgres/status.js';
import type { LoopContext } from '../loop-context.js';

/**
 * Leader duty: the application role and database exist and the role's password matches the
 * mounted Secret; so does the pooler's auth_query role when poolers are configured. Runs on a writable primary only; a failure is logged and retried next cycle,
 * it never stops the HA cycle.
 */
export async function keepAppOwner(ctx: LoopContext, status: ServerStatus): Promise<void> {
  const keeper = ctx.options.appOwner;
  if (status.inRecovery) return;
  const identity = `${status.systemIdentifier}/${status.timeline}/${status.postmasterStartTime}`;
  await keeper
    ?.ensure(() => ctx.pg.connect(), identity)
    .catch((error: Error) => {
      ctx.options.logger.warn({ err: error.message }, 'could not put the application role and database in place; retrying next cycle');
    });
  await ctx.options.poolerRole
    ?.ensure((database) => ctx.pg.connect(database), identity)
    .catch((error: Error) => {
      ctx.options.logger.warn({ err: error.message }, 'could not put the pooler role in place; retrying next cycle');
    });
}
