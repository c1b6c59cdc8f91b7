import { OperationError, type ApiReply, type ClientOptions } from './client.js';
import { memberBases, readCluster, type ClusterDocument, type TargetOptions } from './discovery.js';
import { machine, type OutputFormat } from './render.js';

/** What every ctl action shares: where the cluster is, how to call it, how to talk to the user. */

/** Exit codes of `keelson ctl`. */
export const CtlExit = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

export class UsageError extends Error {}

export interface CtlContext {
  target: TargetOptions;
  client: ClientOptions;
  format: OutputFormat;
  out: (text: string) => void;
  /** Asks a yes/no question; undefined when nobody can answer (no terminal). */
  confirm: (question: string) => Promise<boolean | undefined>;
  /** Asks for a typed answer (one line); undefined when nobody can answer. */
  ask: (question: string) => Promise<string | undefined>;
}

export async function load(ctx: CtlContext): Promise<{ cluster: ClusterDocument; via: string; scope: string }> {
  const bases = await memberBases(ctx.target, ctx.client.names);
  const { cluster, via } = await readCluster(bases, ctx.client);
  return { cluster, via, scope: cluster.scope ?? ctx.target.scope ?? '' };
}

export async function confirmed(ctx: CtlContext, force: boolean | undefined, question: string): Promise<void> {
  if (force) return;
  const answer = await ctx.confirm(question);
  if (answer === undefined) throw new UsageError('refusing to act without confirmation: stdin is not a terminal (use --force)');
  if (!answer) throw new OperationError(0, 'Aborted');
}

/** Prints the outcome of one or more mutating calls; non-2xx makes the command fail. */
export function report(ctx: CtlContext, results: Array<{ member: string; reply: ApiReply }>): number {
  if (ctx.format === 'table') {
    for (const { member, reply } of results) {
      const ok = reply.status < 300;
      ctx.out(`${results.length > 1 || !ok ? `${member}: ` : ''}${ok ? '' : `Failed (HTTP ${reply.status}): `}${reply.text}\n`);
    }
  } else {
    ctx.out(
      machine(
        results.map(({ member, reply }) => ({ member, status: reply.status, message: reply.text })),
        ctx.format,
      ),
    );
  }
  return results.every((r) => r.reply.status < 300) ? CtlExit.ok : CtlExit.failed;
}
