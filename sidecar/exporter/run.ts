import { packageVersion } from '../../lib/cli/version.js';
import { serve, type RunningServer } from '../../lib/httpserver.js';
import type { Logger } from '../../lib/log.js';
import { parseListenAddress } from '../../lib/ports.js';
import { builtinCollectorDocs } from './collectors/builtin-docs.generated.js';
import { builtinOrigin } from './collectors/origin.js';
import { loadCollectorConfig, parseCollectorSources } from './config/load.js';
import type { CollectorSet } from './config/types.js';
import { databaseOf } from './scrape/connection.js';
import { explainText } from './scrape/explain.js';
import { Exporter } from './exporter.js';
import { HealthProbe } from './http/health.js';
import type { ExporterOptions } from './options.js';
import { createExporterListener } from './http/routes.js';
import type { BuildInfo } from './process/selfmetrics.js';
import { BasicAuthChecker, loadWebConfig } from './http/webconfig.js';

export function collectorLoader(configPath: string | undefined): () => CollectorSet {
  return configPath ? () => loadCollectorConfig(configPath) : () => parseCollectorSources(builtinCollectorDocs, builtinOrigin, true);
}

const goArch: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' };

/** Build labels under pg_exporter's names; "go" fields describe the Node runtime here. */
export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return {
    version: packageVersion(),
    revision: env.KEELSON_REVISION ?? 'unknown',
    branch: env.KEELSON_BRANCH ?? 'unknown',
    builddate: env.KEELSON_BUILD_DATE ?? 'unknown',
    goversion: `node${process.versions.node}`,
    goos: process.platform,
    goarch: goArch[process.arch] ?? process.arch,
  };
}

export function versionText(build: BuildInfo): string {
  return `keelson exporter version ${build.version}\nrevision: ${build.revision}\nbranch: ${build.branch}\nruntime version: ${build.goversion}\nbuild date: ${build.builddate}\nos: ${build.goos}\narch: ${build.goarch}\n`;
}

export interface RunningExporter {
  exporter: Exporter;
  health: HealthProbe;
  servers: RunningServer[];
  urls: string[];
  close(): Promise<void>;
}

/** Builds the exporter, starts the health probe and listens on every address. */
export async function startExporter(options: ExporterOptions, logger: Logger): Promise<RunningExporter> {
  for (const warning of options.warnings) logger.warn(warning);
  const webConfig = options.webConfigFile ? loadWebConfig(options.webConfigFile) : undefined;
  for (const warning of webConfig?.warnings ?? []) logger.warn(warning);
  const build = buildInfo();
  const health = new HealthProbe({
    url: options.url,
    intervalMs: options.healthIntervalMs,
    timeoutMs: options.connectTimeoutMs,
    logger,
    pgbouncer: databaseOf(options.url) === 'pgbouncer',
  });
  const exporter = new Exporter({
    url: options.url,
    loadCollectors: collectorLoader(options.configPath),
    constantLabels: options.constantLabels,
    serverTags: options.serverTags,
    autoDiscovery: options.autoDiscovery,
    excludeDatabases: options.excludeDatabases,
    includeDatabases: options.includeDatabases,
    namespace: options.namespace,
    disableCache: options.disableCache,
    disableIntro: options.disableIntro,
    connectTimeoutMs: options.connectTimeoutMs,
    build,
    logger,
    health,
  });
  if (options.failFast) {
    try {
      await exporter.main.prepare();
    } catch (error) {
      await exporter.close();
      throw new Error(`fail-fast: cannot reach the server: ${(error as Error).message}`, { cause: error });
    }
  }
  health.start();
  const app = createExporterListener({
    exporter,
    health,
    telemetryPath: options.telemetryPath,
    logger,
    versionText: versionText(build),
    auth: webConfig && webConfig.users.size > 0 ? new BasicAuthChecker(webConfig.users) : undefined,
    authScope: options.authScope,
    headers: webConfig?.headers ?? {},
  });
  const servers: RunningServer[] = [];
  try {
    for (const address of options.listenAddresses) {
      const { host, port } = parseListenAddress(address);
      servers.push(await serve(app, { host, port, logger, tls: webConfig?.tls, shutdownTimeoutMs: 5_000 }));
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.close()));
    await health.stop();
    await exporter.close();
    throw error;
  }
  return {
    exporter,
    health,
    servers,
    urls: servers.map((s) => s.url),
    async close() {
      await Promise.all(servers.map((s) => s.close()));
      await health.stop();
      await exporter.close();
    },
  };
}

/** --dry-run: every configured collector's explain block, without touching the database. */
export function dryRunText(options: ExporterOptions): string {
  const set = collectorLoader(options.configPath)();
  return explainText([...set.collectors].sort((a, b) => a.priority - b.priority || (a.branch < b.branch ? -1 : 1)));
}

/** --explain: connect, plan for the main server, print what /explain would show. */
export async function explainPlanText(options: ExporterOptions, logger: Logger): Promise<string> {
  const exporter = new Exporter({
    url: options.url,
    loadCollectors: collectorLoader(options.configPath),
    constantLabels: options.constantLabels,
    serverTags: options.serverTags,
    autoDiscovery: false,
    excludeDatabases: options.excludeDatabases,
    includeDatabases: options.includeDatabases,
    namespace: options.namespace,
    disableCache: options.disableCache,
    disableIntro: options.disableIntro,
    connectTimeoutMs: options.connectTimeoutMs,
    build: buildInfo(),
    logger,
    processMetrics: false,
  });
  try {
    await exporter.main.prepare();
    return explainText(exporter.main.installed().map((r) => r.collector));
  } finally {
    await exporter.close();
  }
}

/** The long-running process: serve until SIGTERM/SIGINT; SIGHUP and SIGUSR1 reload the collectors. */
export async function runExporterProcess(options: ExporterOptions, logger: Logger): Promise<void> {
  const running = await startExporter(options, logger);
  const reload = (signal: NodeJS.Signals): void => {
    try {
      running.exporter.reload();
    } catch (error) {
      logger.error({ signal, err: (error as Error).message }, 'reload failed; keeping the previous configuration');
    }
  };
  process.on('SIGHUP', reload);
  process.on('SIGUSR1', reload);
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping');
    void running.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
