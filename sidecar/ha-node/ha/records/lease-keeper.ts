import pg from 'pg';
import type { PostgresInstance } from '../../postgres/instance.js';
import { renewLock, type LoopContext } from '../loop-context.js';

/**
 * The lock holder's long steps (promotion: pg_promote, then labels, CHECKPOINT, slots, history)
 * can outlast the fence deadline of the lease write before them on a loaded machine, and the
 * fencer would stop a primary that is merely busy. While such a step runs, the lease is renewed
 * every loop_wait, as Patroni renews it "during promote", but only while the local server still
 * answers: a server that hangs meanwhile is not renewed for and is fenced as before, and so is one
 * whose renewals cannot reach the API. Each step is bounded on its own (query and request timeouts).
 */

/** How often the lease is renewed during a long step: every loop_wait, and well inside the fence window. */
export function keeperIntervalMs(config: { loop_wait: number; ttl: number }): number {
  return Math.max(250, Math.min(config.loop_wait * 1000, (config.ttl * 1000) / 3));
}

/** Whether the local server answers (an error it sends, e.g. too many connections, is an answer too). */
async function serverAnswers(server: Pick<PostgresInstance, 'query'>): Promise<boolean> {
  try {
    await server.query('SELECT 1');
    return true;
  } catch (error) {
    return error instanceof pg.DatabaseError;
  }
}

/**
 * Runs `step` while renewing the leader lease in the background. Returns the step's value and
 * whether a renewal found the lock taken; no renewal is in flight once it returns (a late one
 * must not move the fence deadline after the caller demoted).
 */
export async function keepingLease<T>(ctx: LoopContext, what: string, step: () => Promise<T>): Promise<{ value: T; lost: boolean }> {
  let lost = false;
  let done = false;
  // One renewal at a time: a tick while a slow probe or request is in flight is skipped.
  let inFlight: Promise<void> | undefined;
  const renewOnce = async (): Promise<void> => {
    if (done || lost || !(await serverAnswers(ctx.pg)) || done) return;
    const renewal = await renewLock(ctx, undefined);
    if (renewal === 'lost') lost = true;
    if (renewal === 'ok') ctx.options.logger.info({ during: what }, 'renewed the leader lease during a long step');
    else ctx.options.logger.warn({ during: what, renewal }, 'could not renew the leader lease during a long step');
  };
  const timer = setInterval(() => {
    inFlight ??= renewOnce().finally(() => {
      inFlight = undefined;
    });
  }, keeperIntervalMs(ctx.state.config));
  let value: T;
  try {
    value = await step();
  } finally {
    done = true;
    clearInterval(timer);
    await inFlight;
  }
  return { value, lost };
}
