import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { loadApiCredentials, type ApiCredentials } from '../api/ha-node/credentials.js';
import { CtlExit, UsageError, type CtlContext } from './actions.js';
import type * as Actions from './actions.js';
import { onceSource, OperationError, UnreachableError, type ClientOptions } from './client.js';
import { credentialsFromClusterSecret, type TargetOptions } from './discovery.js';
import { MemberNames, onceCa } from './member-tls.js';
import { serverCaFromClusterSecret } from './query-tls.js';
import { resolveMemberRoute } from './member-route.js';
import type { CtlFlags } from './options.js';
import { parseFormat } from './render.js';

function credentialsFrom(flags: CtlFlags, env: NodeJS.ProcessEnv): ApiCredentials | undefined {
  if (flags.token) return { token: flags.token };
  if (flags.password) return { username: flags.username ?? env.KEELSON_API_USERNAME ?? 'keelson', password: flags.password };
  return loadApiCredentials(env);
}

function caBundle(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --cacert ${path}: ${(error as Error).message}`);
  }
}

/**
 * The trust for https members: --cacert, else the cluster's own CA from its Secret (read at the
 * first https call, so commands against plain HTTP members need no Secret), and the members'
 * names under the headless Service when the cluster is found through its Leases.
 */
function apiTrust(target: TargetOptions, given: string | undefined): Pick<ClientOptions, 'ca' | 'names'> {
  const found = target.urls.length === 0 && target.scope ? target.scope : undefined;
  return {
    ...(given !== undefined ? { ca: given } : found ? { ca: onceCa(() => serverCaFromClusterSecret(target)) } : {}),
    ...(found ? { names: new MemberNames(found, target.namespace) } : {}),
  };
}

async function askTerminal(question: string): Promise<boolean | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** One line reader over stdin for every typed answer of a run (piped answers work too), closed at the end. */
class StdinAnswers {
  private lines: AsyncIterator<string> | undefined;
  private close: (() => void) | undefined;

  readonly ask = async (question: string): Promise<string | undefined> => {
    process.stderr.write(`${question} `);
    if (!this.lines) {
      const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
      this.close = () => rl.close();
      this.lines = rl[Symbol.asyncIterator]();
    }
    const next = await this.lines.next();
    return next.done ? undefined : next.value;
  };

  done(): void {
    this.close?.();
  }
}

/** Builds the context from flags and environment, runs one action and maps errors to exit codes. */
export async function execute(
  flags: CtlFlags,
  action: (ctx: CtlContext, impl: typeof Actions) => Promise<number>,
  env: NodeJS.ProcessEnv = process.env,
  io: { out(text: string): void; err(text: string): void; ask?(question: string): Promise<string | undefined> } = {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  },
): Promise<number> {
  const stdinAnswers = new StdinAnswers();
  try {
    const timeout = Number(flags.requestTimeout ?? '10');
    if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError('--request-timeout must be a positive number of seconds');
    const urls = flags.url ?? (env.KEELSON_CTL_URL ? env.KEELSON_CTL_URL.split(',').filter(Boolean) : []);
    if (flags.clusterArgument !== undefined && flags.cluster !== undefined && flags.clusterArgument !== flags.cluster) {
      throw new UsageError(`the cluster named as an argument ("${flags.clusterArgument}") differs from --cluster "${flags.cluster}"`);
    }
    const target = {
      urls,
      scope: flags.clusterArgument ?? flags.cluster ?? env.KEELSON_CLUSTER,
      namespace: flags.namespace ?? env.POD_NAMESPACE ?? 'default',
      kubeconfig: flags.kubeconfig,
    };
    // The cluster's Secret is read only if a mutating request needs credentials (read-only
    // commands then work with a kubeconfig that may not read Secrets).
    const credentials = credentialsFrom(flags, env) ?? onceSource(() => credentialsFromClusterSecret(target));
    const ctx: CtlContext = {
      target,
      client: {
        credentials,
        timeoutMs: timeout * 1000,
        ...apiTrust(target, caBundle(flags.cacert ?? env.KEELSON_API_CACERT)),
        insecure: flags.insecure,
        route: resolveMemberRoute(target.kubeconfig, env),
      },
      format: parseFormat(flags.output),
      out: (text) => io.out(text),
      confirm: askTerminal,
      ask: io.ask ? (question) => io.ask!(question) : stdinAnswers.ask,
    };
    const impl = await import('./actions.js');
    return await action(ctx, impl);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.err(`keelson ctl: ${message}\n`);
    if (error instanceof UsageError) return CtlExit.usage;
    if (error instanceof UnreachableError) return CtlExit.unreachable;
    if (error instanceof OperationError) return CtlExit.failed;
    return CtlExit.failed;
  } finally {
    stdinAnswers.done();
  }
}
