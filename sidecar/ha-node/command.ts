import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

/**
 * `keelson ha-node`: supervises PostgreSQL and elects the primary through Kubernetes Leases.
 * Settings come from flags, the pod environment (POD_NAME, POD_NAMESPACE, POD_IP, KEELSON_*)
 * or a YAML file; the implementation is imported only when the command runs.
 */
export function createHaNodeCommand(): Command {
  const command = new Command('ha-node')
    .description('supervise PostgreSQL and elect the primary through Kubernetes Leases')
    .option('--config <file>', 'YAML file with settings (keys as in the flags, camelCase)')
    .option('--name <name>', 'member name (env POD_NAME)')
    .option('--namespace <ns>', 'namespace of the DCS Leases and the pod (env POD_NAMESPACE)')
    .option('--scope <cluster>', 'cluster name (env KEELSON_CLUSTER)')
    .option('--pod-ip <ip>', 'address other members use (env POD_IP)')
    .option('--api-listen <address>', 'REST API listen address (default :8008, env KEELSON_API_LISTEN)')
    .option('--pg-listen <addresses>', 'PostgreSQL listen_addresses (default *, env KEELSON_PG_LISTEN)')
    .option('--pg-port <port>', 'PostgreSQL port (default 5432, env KEELSON_PG_PORT)')
    .option('--data-dir <dir>', 'PostgreSQL data directory (env PGDATA)')
    .option('--pg-bin <dir>', 'PostgreSQL binaries (env PG_BIN)')
    .option('--run-as <user>', 'system user for PostgreSQL when running as root (default postgres, env KEELSON_PG_RUN_AS)')
    .option('--ttl <seconds>', 'leader lease duration (default 30, env KEELSON_TTL)')
    .option('--loop-wait <seconds>', 'HA loop interval (default 10, env KEELSON_LOOP_WAIT)')
    .option('--retry-timeout <seconds>', 'DCS and PostgreSQL retry bound (default 10, env KEELSON_RETRY_TIMEOUT)')
    .option('--bootstrap-config <json>', "dynamic configuration a new cluster starts with, as JSON (Patroni's bootstrap.dcs; env KEELSON_BOOTSTRAP_CONFIG)")
    .option('--kubeconfig <path>', 'kubeconfig file (else KUBECONFIG, in-cluster, ~/.kube/config)')
    .addHelpText('after', '\nEvery setting, also those without a flag (environment and file only): docs/ha-node-settings.md')
    .action(async (opts: Record<string, string | undefined>) => {
      try {
        const { loadHaNodeSettings } = await import('./config.js');
        const settings = loadHaNodeSettings({
          file: opts.config,
          flags: {
            name: opts.name,
            namespace: opts.namespace,
            scope: opts.scope,
            podIp: opts.podIp,
            apiListen: opts.apiListen,
            pgListen: opts.pgListen,
            pgPort: opts.pgPort,
            dataDir: opts.dataDir,
            pgBin: opts.pgBin,
            runAs: opts.runAs,
            ttl: opts.ttl,
            loopWait: opts.loopWait,
            retryTimeout: opts.retryTimeout,
            bootstrapConfig: opts.bootstrapConfig,
            kubeconfig: opts.kubeconfig,
          },
        });
        const { runHaNode } = await import('./run.js');
        const { opsModules } = await import('./api/ops/index.js');
        const node = await runHaNode(settings, { apiModules: opsModules });
        const stop = (signal: string): void => {
          process.stderr.write(`ha-node: ${signal}, stopping\n`);
          void node.close().then(
            () => process.exit(0),
            (error: unknown) => failAndExit(error),
          );
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      } catch (error) {
        failAndExit(error);
      }
    });
  command
    .command('fence')
    .description('fencing process: stop PostgreSQL when the ha-node deadline passes (started by ha-node)')
    .requiredOption('--deadline-file <path>', 'file holding the epoch-ms fence deadline')
    .requiredOption('--pgdata <dir>', 'PostgreSQL data directory')
    .requiredOption('--parent-pid <pid>', 'the ha-node process id')
    .action(async (opts: { deadlineFile: string; pgdata: string; parentPid: string }) => {
      try {
        const { runFencer } = await import('./fence/fencer.js');
        const { createLogger } = await import('../../lib/log.js');
        process.on('SIGTERM', () => process.exit(0));
        await runFencer({
          deadlineFile: opts.deadlineFile,
          dataDir: opts.pgdata,
          parentPid: Number(opts.parentPid),
          logger: createLogger({ name: 'ha-node-fence' }),
        });
      } catch (error) {
        failAndExit(error);
      }
    });
  return command;
}
