import { confirmFailsafe } from './failsafe-client.js';
import { connUrl, renewed, scheduleSoon, type LoopContext } from '../loop-context.js';
import { demoteOffline } from './transitions.js';
import { dcsUnreachable, failsafeActive, failsafeContact, statusRead } from '../state.js';

/** API unreachable: keep going, but a primary that could not renew for retry_timeout demotes. */
export async function handleDcsError(ctx: LoopContext, error: unknown): Promise<string> {
  const { pg, state } = ctx;
  dcsUnreachable(state);
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  const sinceRenew = performance.now() - state.lastRenewMono;
  const status = pg.isRunning() ? await pg.status().catch(() => undefined) : undefined;
  statusRead(state, status);
  if (status && !status.inRecovery) {
    if (state.config.failsafe_mode && (await failsafeConfirmed(ctx))) {
      return 'continue to run as a leader because failsafe mode is enabled and all members are accessible';
    }
    if (sinceRenew < state.config.retry_timeout * 1000) {
      scheduleSoon(ctx, 500);
      return `DCS is not accessible (${message}); still within retry_timeout`;
    }
    await demoteOffline(ctx);
    return 'demoted self because DCS is not accessible and I was a leader';
  }
  return `DCS is not accessible (${message})`;
}

/**
 * Failsafe: with the API server gone, the primary keeps running only while every member it
 * last listed confirms over the REST API that it is not a primary (Patroni's POST /failsafe).
 */
async function failsafeConfirmed(ctx: LoopContext): Promise<boolean> {
  const { state } = ctx;
  const startedEpoch = Date.now();
  const startedMono = performance.now();
  const confirmed = await confirmFailsafe(
    state.snapshot.cluster,
    {
      name: ctx.options.name,
      api_url: ctx.options.apiUrl,
      conn_url: connUrl(ctx.pg),
    },
    { authorization: ctx.options.apiAuthorization, tls: ctx.options.peerTls },
  );
  failsafeActive(state, confirmed);
  if (!confirmed) return false;
  // The API keeps calling us primary (/primary, /readiness 200): the -rw Service keeps its endpoint.
  ctx.dcs.holdLeadershipInFailsafe(performance.now() - startedMono);
  renewed(ctx, startedEpoch);
  scheduleSoon(ctx, 500);
  return true;
}

/** POST /failsafe from a leader cut off from the API server. */
export function receiveFailsafe(ctx: LoopContext, from: { name?: unknown }): { status: number; text: string } {
  const status = ctx.state.snapshot.status;
  if (status && !status.inRecovery) return { status: 500, text: 'Running as a leader' };
  if (typeof from.name !== 'string' || from.name.length === 0) return { status: 400, text: 'name is required' };
  failsafeContact(ctx.state, from.name, performance.now());
  return { status: 200, text: 'Accepted' };
}
