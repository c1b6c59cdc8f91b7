import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

/**
 * `keelson pooler`: runs PgBouncer with a rendered pgbouncer.ini and serves the control API that
 * ha-node uses to pause, retarget and resume it around a switchover. Settings from KEELSON_POOLER_*
 * (the pooler Deployment) or flags; the implementation is imported only when the command runs.
 */
export function createPoolerCommand(): Command {
  return new Command('pooler')
    .description('run PgBouncer in front of the cluster primary, paused by ha-node around switchovers')
    .option('--config <file>', 'YAML file with settings (camelCase keys)')
    .option('--target-host <host>', 'initial PostgreSQL host (env KEELSON_POOLER_TARGET_HOST)')
    .option('--listen <address>', 'client listen address (env KEELSON_POOLER_LISTEN)')
    .option('--control-listen <address>', 'control API listen address (env KEELSON_POOLER_CONTROL_LISTEN)')
    .action(async (opts: Record<string, string | undefined>) => {
      try {
        const { loadPoolerSettings } = await import('./config.js');
        const settings = loadPoolerSettings({
          file: opts.config,
          flags: { targetHost: opts.targetHost, listen: opts.listen, controlListen: opts.controlListen },
        });
        const { startPooler } = await import('./run.js');
        const { loadApiCredentials } = await import('../../api/ha-node/credentials.js');
        const { createLogger } = await import('../../lib/log.js');
        const logger = createLogger({ name: 'pooler' });
        const pooler = await startPooler(settings, loadApiCredentials(), logger);
        logger.info({ control: pooler.controlUrl }, 'pooler running');
        const stop = (): void => {
          pooler.close().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      } catch (error) {
        failAndExit(error);
      }
    });
}
