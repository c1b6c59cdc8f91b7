import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { loadKubeConfig } from '../../lib/kube/client.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { CtlIo } from '../command.js';
import { CtlExit, type CtlContext } from '../context.js';
import type * as Actions from '../actions.js';
import type { CtlFlags } from '../options.js';
import { table } from '../render.js';
import { clusterPods, podForRole, readDatabaseCluster, type PodSummary } from './cluster-pods.js';
import { logsArgs, psqlArgs, type KubectlTarget } from './kubectl-args.js';

/**
 * `kubectl keelson`: the kubectl plugin (an executable named kubectl-keelson on PATH). Cluster-level
 * commands for Kubernetes users, in the spirit of `kubectl cnpg`: status, promote, restart, psql,
 * logs. Member operations go through `keelson ctl`'s actions (Leases, the cluster's API Secret);
 * psql and logs hand over to kubectl itself.
 */

interface PluginFlags {
  namespace?: string;
  kubeconfig?: string;
  context?: string;
}

/** The namespace as kubectl picks it: -n, else the kubeconfig context's, else "default". */
function target(flags: PluginFlags): KubectlTarget {
  let namespace = flags.namespace;
  if (!namespace) {
    try {
      const kubeConfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
      namespace = kubeConfig.getContextObject(flags.context ?? kubeConfig.getCurrentContext())?.namespace;
    } catch {
      // no kubeconfig: the commands that need one say so
    }
  }
  return { namespace: namespace ?? 'default', kubeconfig: flags.kubeconfig, context: flags.context };
}

export function statusText(cluster: string, namespace: string, resource: DatabaseCluster | undefined, pods: PodSummary[]): string {
  const lines = [`Cluster:    ${cluster} (namespace ${namespace})`];
  if (resource) {
    const status = resource.status;
    lines.push(
      `Phase:      ${status?.phase ?? 'unknown'}`,
      `Instances:  ${status?.readyInstances ?? 0}/${resource.spec.instances} ready`,
      `Primary:    ${status?.currentPrimary ?? 'none'}`,
    );
    for (const c of status?.conditions ?? [])
      lines.push(`Condition:  ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`);
  } else {
    lines.push(`DatabaseCluster ${cluster} not found: showing its pods and members only`);
  }
  const podRows = pods.map((p) => [p.name, p.role || '-', p.phase, p.ready ? 'yes' : 'no', p.node ?? '']);
  return `${lines.join('\n')}\n\nPods\n${pods.length > 0 ? table(['Pod', 'Role', 'Phase', 'Ready', 'Node'], podRows) : '(none)\n'}\nMembers (ha-node)\n`;
}

export function createKubectlPlugin(io?: CtlIo, env: NodeJS.ProcessEnv = process.env): Command {
  const out = (text: string): void => (io ? io.out(text) : void process.stdout.write(text));
  const plugin = new Command('kubectl-keelson')
    .description('kubectl keelson: status, promote, restart, psql and logs for keelson DatabaseClusters')
    .option('-n, --namespace <ns>', 'namespace of the cluster (default: "default")')
    .option('--kubeconfig <path>', 'kubeconfig file (else KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context (psql and logs; the others use the current context)');

  /** Runs a ctl action against the named cluster, found through its Leases in the namespace. */
  const ctl = async (
    command: Command,
    cluster: string,
    action: (ctx: CtlContext, impl: typeof Actions) => Promise<number>,
    extra: Partial<CtlFlags> = {},
  ): Promise<number> => {
    const flags = command.optsWithGlobals<PluginFlags>();
    const { execute } = await import('../run.js');
    return execute({ cluster, namespace: target(flags).namespace, kubeconfig: flags.kubeconfig, ...extra }, action, env, io);
  };

  const status = plugin
    .command('status')
    .description("the DatabaseCluster's phase and conditions, its pods and the members as ha-node sees them")
    .argument('<cluster>');
  status.action(async (cluster: string) => {
    const flags = status.optsWithGlobals<PluginFlags>();
    const t = target(flags);
    try {
      const kubeConfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
      out(statusText(cluster, t.namespace, await readDatabaseCluster(kubeConfig, t.namespace, cluster), await clusterPods(kubeConfig, t.namespace, cluster)));
    } catch (error) {
      (io?.err ?? ((s: string) => process.stderr.write(s)))(`kubectl keelson: ${(error as Error).message}\n`);
      process.exitCode = CtlExit.unreachable;
      return;
    }
    process.exitCode = await ctl(status, cluster, (ctx, a) => a.listCommand(ctx, false));
  });

  const promote = plugin
    .command('promote')
    .description('make a member the primary (a switchover, or a failover when there is no leader)')
    .argument('<cluster>')
    .argument('<member>');
  promote.action(async (cluster: string, member: string) => {
    process.exitCode = await ctl(promote, cluster, async (ctx, a) => {
      const { cluster: doc } = await (await import('../context.js')).load(ctx);
      const hasLeader = doc.members.some((m) => m.role === 'leader');
      return a.switchoverCommand(ctx, hasLeader ? 'switchover' : 'failover', { candidate: member, force: true });
    });
  });

  const restart = plugin
    .command('restart')
    .description('restart PostgreSQL on every member, or on the one named (replicas first is up to you: name them)')
    .argument('<cluster>')
    .argument('[member]');
  restart.action(async (cluster: string, member: string | undefined) => {
    process.exitCode = await ctl(restart, cluster, (ctx, a) => a.restartCommand(ctx, member ? [member] : [], { force: true }));
  });

  const kubectl = (args: string[]): Promise<number> =>
    new Promise((resolve) => {
      const child = spawn(env.KUBECTL ?? 'kubectl', args, { stdio: 'inherit' });
      child.on('error', (error) => {
        process.stderr.write(`kubectl keelson: cannot run kubectl: ${error.message}\n`);
        resolve(CtlExit.unreachable);
      });
      child.on('exit', (code) => resolve(code ?? 1));
    });

  const psql = plugin
    .command('psql')
    .description("psql in the primary's (or a replica's) postgres container; arguments after -- go to psql")
    .argument('<cluster>')
    .argument('[psqlArgs...]')
    .option('--replica', 'connect to a replica instead of the primary');
  psql.action(async (cluster: string, psqlOptions: string[]) => {
    const flags = psql.optsWithGlobals<PluginFlags & { replica?: boolean }>();
    const t = target(flags);
    const pods = await clusterPods(loadKubeConfig({ kubeconfig: flags.kubeconfig }), t.namespace, cluster).catch(() => []);
    const pod = podForRole(pods, Boolean(flags.replica));
    if (!pod) {
      process.stderr.write(`kubectl keelson: no ${flags.replica ? 'replica' : 'primary'} pod of cluster ${cluster} in namespace ${t.namespace}\n`);
      process.exitCode = CtlExit.failed;
      return;
    }
    process.exitCode = await kubectl(psqlArgs(t, pod.name, psqlOptions, Boolean(process.stdin.isTTY)));
  });

  const logs = plugin
    .command('logs')
    .description('ha-node and PostgreSQL logs of every pod of the cluster (or of one, --pod), each line prefixed with its pod')
    .argument('<cluster>')
    .option('-f, --follow', 'keep streaming')
    .option('--tail <lines>', "lines of each pod's log to show first")
    .option('--since <duration>', 'only lines newer than this (5m, 1h)')
    .option('--pod <name>', 'one pod only');
  logs.action(async (cluster: string) => {
    const flags = logs.optsWithGlobals<PluginFlags & { follow?: boolean; tail?: string; since?: string; pod?: string }>();
    process.exitCode = await kubectl(logsArgs(target(flags), cluster, flags));
  });
  return plugin;
}
