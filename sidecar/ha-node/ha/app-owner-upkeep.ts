import type { ServerStatus } from '../postgres/status.js';
import type { LoopContext } from './loop-context.js';

/**
 * Leader duty: the application role and database exist and the role's password matches the
 * mounted Secret. Runs on a writable primary only; a failure is logged and retried next cycle,
 * it never stops the HA cycle.
 */
export async function keepAppOwner(ctx: LoopContext, status: ServerStatus): Promise<void> {
  const keeper = ctx.options.appOwner;
  if (!keeper || status.inRecovery) return;
  const identity = `${status.systemIdentifier}/${status.timeline}/${status.postmasterStartTime}`;
  await keeper.ensure(() => ctx.pg.connect(), identity).catch((error: Error) => {
    ctx.options.logger.warn({ err: error.message }, 'could not put the application role and database in place; retrying next cycle');
  });
}
