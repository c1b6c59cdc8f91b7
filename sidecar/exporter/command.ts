import { Command, Option } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * `keelson exporter`: pg_exporter-compatible flags (env vars in the help). The implementation is
 * imported only when the command runs.
 */
export function createExporterCommand(): Command {
  return new Command('exporter')
    .description('serve PostgreSQL metrics and health checks (pg_exporter compatible)')
    .option('-u, --url <url>', 'PostgreSQL URL (env PG_EXPORTER_URL, PGURL, PG_EXPORTER_URL_FILE)')
    .option('-c, --config <path>', 'collector YAML file or directory; default: the built-in set (env PG_EXPORTER_CONFIG)')
    .option('--web.listen-address <address>', 'address to listen on, repeatable (default :9630)', collect)
    .option('-P, --web.telemetry-path <path>', 'path of the metrics endpoint (default /metrics, env PG_EXPORTER_TELEMETRY_PATH)')
    .option('--web.config.file <file>', 'exporter-toolkit web config: TLS and basic auth')
    .addOption(
      new Option('--web.auth-scope <scope>', 'endpoints basic auth protects: all, or admin (/reload, /explain, /stat) (env PG_EXPORTER_AUTH_SCOPE)').choices([
        'all',
        'admin',
      ]),
    )
    .option('-l, --label <labels>', 'constant labels k=v,k2=v2 (env PG_EXPORTER_LABEL)')
    .option('-t, --tag <tags>', 'extra planning tags, comma separated (env PG_EXPORTER_TAG)')
    .option('-a, --auto-discovery [bool]', 'scrape every database of the instance (default true, env PG_EXPORTER_AUTO_DISCOVERY)')
    .option('--no-auto-discovery', 'only scrape the database of the URL')
    .option('-x, --exclude-database <list>', 'databases not to discover (default template0,template1,postgres)')
    .option('-i, --include-database <list>', 'only discover these databases')
    .option('-n, --namespace <prefix>', 'prefix of the built-in and self metrics (default pg)')
    .option('-C, --disable-cache [bool]', 'run every collector on every scrape (env PG_EXPORTER_DISABLE_CACHE)')
    .option('-m, --disable-intro [bool]', 'leave out pg_up, pg_version and the exporter self-metrics (env PG_EXPORTER_DISABLE_INTRO)')
    .option('-f, --fail-fast [bool]', 'exit when the server cannot be reached at start (env PG_EXPORTER_FAIL_FAST)')
    .option('-T, --connect-timeout <ms>', 'bound on prechecks and health probes in ms (default 100, env PG_EXPORTER_CONNECT_TIMEOUT)')
    .option('--health-interval <ms>', 'time between health probes in ms (default 1000; Keelson only)')
    .option('--log.level <level>', 'debug, info, warn or error (env LOG_LEVEL)')
    .addOption(new Option('--log.format <format>', 'accepted for pg_exporter compatibility; logs are always JSON lines').choices(['logfmt', 'json']))
    .option('-D, --dry-run', 'print the explain text of every configured collector and exit')
    .option('-E, --explain', 'connect, plan, print the explain text and exit')
    .action(async (opts: Record<string, unknown>) => {
      try {
        // The entry point has set these before anything loaded (bin/exporter-early-flags.ts);
        // again here for a program built in-process, before the implementation loads.
        const { keepHeapSmall } = await import('./process/memory.js');
        keepHeapSmall();
        const { resolveExporterOptions } = await import('./options.js');
        const options = resolveExporterOptions({
          url: opts.url,
          config: opts.config,
          'web.listen-address': opts['web.listenAddress'],
          'web.telemetry-path': opts['web.telemetryPath'],
          'web.config.file': opts['web.config.file'],
          'web.auth-scope': opts['web.authScope'],
          label: opts.label,
          tag: opts.tag,
          'auto-discovery': opts.autoDiscovery,
          'exclude-database': opts.excludeDatabase,
          'include-database': opts.includeDatabase,
          namespace: opts.namespace,
          'disable-cache': opts.disableCache,
          'disable-intro': opts.disableIntro,
          'fail-fast': opts.failFast,
          'connect-timeout': opts.connectTimeout,
          'health-interval': opts.healthInterval,
          'log.level': opts['log.level'],
        });
        const run = await import('./run.js');
        if (opts.dryRun) {
          process.stdout.write(run.dryRunText(options));
          return;
        }
        const { createLogger } = await import('../../lib/log.js');
        const logger = createLogger({ name: 'exporter', level: options.logLevel, destination: process.stderr });
        if (opts['log.format'] === 'logfmt') logger.warn('--log.format logfmt is not supported; logging JSON lines');
        if (opts.explain) {
          process.stdout.write(await run.explainPlanText(options, logger));
          return;
        }
        await run.runExporterProcess(options, logger);
      } catch (error) {
        failAndExit(error);
      }
    });
}
