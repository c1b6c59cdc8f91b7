import { apiBase, callMember } from './client.js';
import { CtlExit, load, UsageError, type CtlContext } from './context.js';
import type { ClusterDocument } from './discovery.js';
import { fetchPoolers, renderPoolers } from './poolers.js';
import { machine, renderList, renderTopology } from './render.js';

export interface ListOptions {
  /** Add LSN and lag columns and each member's scheduled restart. */
  extended?: boolean;
  /** Seconds between refreshes; the list repeats until interrupted (or `count` times). */
  watch?: string;
  count?: string;
}

/** member → time of its scheduled restart (GET /restart on each member; one that does not answer shows none). */
async function scheduledRestarts(ctx: CtlContext, cluster: ClusterDocument): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  await Promise.all(
    cluster.members.map(async (m) => {
      const reply = await callMember(apiBase(m.api_url), 'GET', '/restart', undefined, ctx.client).catch(() => undefined);
      if (reply?.status !== 200) return;
      try {
        const schedule = (JSON.parse(reply.text) as { schedule?: unknown }).schedule;
        if (typeof schedule === 'string') found.set(m.name, schedule);
      } catch {
        // not JSON: shown as no scheduled restart
      }
    }),
  );
  return found;
}

function positiveNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a positive number`);
  return n;
}

async function renderOnce(ctx: CtlContext, topology: boolean, extended: boolean): Promise<string> {
  const { cluster, scope } = await load(ctx);
  if (ctx.format !== 'table') return machine(cluster, ctx.format);
  if (topology) return renderTopology(cluster, scope);
  const [restarts, poolers] = await Promise.all([extended ? scheduledRestarts(ctx, cluster) : undefined, fetchPoolers(cluster, ctx.client)]);
  return renderList(cluster, scope, restarts) + renderPoolers(poolers);
}

/** `list` / `topology`, once or every --watch seconds (a terminal is cleared between refreshes). */
export async function listCommand(ctx: CtlContext, topology: boolean, options: ListOptions = {}): Promise<number> {
  const interval = positiveNumber(options.watch, '--watch');
  const count = positiveNumber(options.count, '--count');
  if (count !== undefined && !Number.isInteger(count)) throw new UsageError('--count must be a whole number');
  if (interval === undefined) {
    ctx.out(await renderOnce(ctx, topology, Boolean(options.extended)));
    return CtlExit.ok;
  }
  const clear = process.stdout.isTTY ? '\x1b[H\x1b[2J' : '';
  for (let shown = 0; count === undefined || shown < count; shown += 1) {
    if (shown > 0) await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    const text = await renderOnce(ctx, topology, Boolean(options.extended)).catch(
      (error: unknown) => `${error instanceof Error ? error.message : String(error)}\n`,
    );
    ctx.out(`${clear}${new Date().toISOString()}\n${text}`);
  }
  return CtlExit.ok;
}
