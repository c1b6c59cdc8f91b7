import type { Logger } from '../../lib/log.js';
import { checkConstantLabels } from './config/validate.js';
import type { CollectorSet } from './config/types.js';
import { databaseOf, maskUrl, urlForDatabase } from './scrape/connection.js';
import { BodyAssembler, bodyText, type ScrapeBody } from './http/body.js';
import { ByteWriter } from './text/bytewriter.js';
import type { RenderedFamily } from './text/exposition.js';
import type { HealthProbe } from './http/health.js';
import type { ExporterOptions } from './options.js';
import { ProcessMetrics } from './process/processmetrics.js';
import { SelfMetrics, type BuildInfo } from './process/selfmetrics.js';
import { TargetServer } from './scrape/server.js';
import { monotonicMs } from './process/clock.js';

/** The parsed options the core uses (declared once, in options.ts) plus what the command builds. */
export interface ExporterSettings extends Pick<
  ExporterOptions,
  | 'url'
  | 'constantLabels'
  | 'serverTags'
  | 'autoDiscovery'
  | 'excludeDatabases'
  | 'includeDatabases'
  | 'namespace'
  | 'disableCache'
  | 'disableIntro'
  | 'connectTimeoutMs'
> {
  /** Loads the collector definitions; called at start and on every reload. */
  loadCollectors: () => CollectorSet;
  build: BuildInfo;
  logger: Logger;
  /** Include Node process metrics (process_*, nodejs_*), like the Go runtime metrics upstream. */
  processMetrics?: boolean;
  health?: HealthProbe;
}

/**
 * The exporter core: the main server plus auto-discovered databases, one shared in-flight scrape,
 * self-metrics and reload. Concurrent /metrics requests share the running collection instead of
 * queueing behind a lock or running twice.
 */
export class Exporter {
  readonly main: TargetServer;
  private collectorSet: CollectorSet;
  private readonly forked = new Map<string, TargetServer>();
  private readonly constantPairs: Array<readonly [string, string]>;
  private inflight: Promise<ScrapeBody> | undefined;
  private readonly startedAtMs = Date.now();
  private lastScrapeAtMs = 0;
  private lastScrapeSeconds = 0;
  private scrapeCount = 0;
  private scrapeErrorCount = 0;
  private lastScrapeFailed = false;
  private readonly selfMetrics: SelfMetrics | undefined;
  private readonly processMetrics: ProcessMetrics | undefined;
  private readonly body: BodyAssembler;
  private freshSize = 0;

  constructor(private readonly settings: ExporterSettings) {
    this.collectorSet = settings.loadCollectors();
    checkConstantLabels(this.collectorSet.collectors, settings.constantLabels, !settings.disableIntro);
    for (const warning of this.collectorSet.warnings) settings.logger.warn(warning);
    this.constantPairs = Object.entries(settings.constantLabels);
    this.main = this.createServer(settings.url, databaseOf(settings.url) || 'postgres', false);
    this.selfMetrics = settings.disableIntro ? undefined : new SelfMetrics(settings.namespace, this.constantPairs, settings.build);
    this.processMetrics = settings.processMetrics === false ? undefined : new ProcessMetrics(this.constantPairs);
    this.body = new BodyAssembler(new Set([...(this.selfMetrics?.familyNames() ?? []), ...(this.processMetrics?.familyNames() ?? [])]));
    settings.logger.info({ url: maskUrl(settings.url), collectors: this.collectorSet.collectors.length, origin: this.collectorSet.origin }, 'exporter created');
  }

  get collectors(): CollectorSet {
    return this.collectorSet;
  }

  servers(): TargetServer[] {
    return [this.main, ...this.forked.values()];
  }

  private createServer(url: string, datname: string, forked: boolean): TargetServer {
    return new TargetServer(
      {
        url,
        datname,
        forked,
        poolSize: forked ? 1 : 2,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        serverTags: this.settings.serverTags,
        constantLabels: this.constantPairs,
        disableCache: this.settings.disableCache,
        logger: this.settings.logger,
      },
      this.collectorSet.collectors,
    );
  }

  /** The metrics body as text (tests, tools; the HTTP path sends the parts without joining them). */
  async scrapeText(): Promise<string> {
    return bodyText(await this.scrape());
  }

  /** The metrics body. A scrape already running is shared, not repeated. */
  scrape(): Promise<ScrapeBody> {
    this.inflight ??= this.collect().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async collect(): Promise<ScrapeBody> {
    const startedMs = Date.now();
    const started = monotonicMs();
    this.scrapeCount++;
    const families: RenderedFamily[] = [];
    // Known databases are scraped beside the main server (one connection each); the main scrape
    // then tells which databases exist, and new ones are scraped right after.
    const known = [...this.forked.values()];
    const [main, ...forkedResults] = await Promise.all([this.main.scrape(startedMs), ...known.map((s) => s.scrape(startedMs))]);
    families.push(...main.families);
    if (main.up) {
      for (const result of forkedResults) families.push(...result.families);
      if (main.facts && this.settings.autoDiscovery) {
        for (const server of this.syncDatabases(main.facts.databases, main.facts.datname)) families.push(...(await server.scrape(startedMs)).families);
      }
    } else {
      this.settings.logger.warn({ err: main.error }, 'scrape failed: server not up');
    }
    this.settings.health?.set(main.up ? (this.main.inRecovery ? 'replica' : 'primary') : 'down');
    this.lastScrapeFailed = !main.up;
    if (!main.up) this.scrapeErrorCount++;
    this.lastScrapeAtMs = startedMs;
    this.lastScrapeSeconds = (monotonicMs() - started) / 1000;
    // Sized from the last scrape, so the buffer rarely grows (and copies) while it is written.
    const fresh = new ByteWriter(this.freshSize + 512);
    this.selfMetrics?.write(fresh, {
      startedAtMs: this.startedAtMs,
      lastScrapeAtMs: this.lastScrapeAtMs,
      lastScrapeSeconds: this.lastScrapeSeconds,
      scrapeCount: this.scrapeCount,
      scrapeErrorCount: this.scrapeErrorCount,
      lastScrapeFailed: this.lastScrapeFailed,
      main: this.main,
      servers: this.servers(),
    });
    this.processMetrics?.write(fresh);
    this.freshSize = fresh.size;
    return this.body.assemble(families, fresh.result());
  }

  /** Starts and stops forked servers so that they match the discovered databases; returns the new ones. */
  private syncDatabases(databases: string[], mainDatabase: string): TargetServer[] {
    const include = this.settings.includeDatabases;
    const wanted = new Set(
      databases.filter((db) => db !== mainDatabase && !this.settings.excludeDatabases.includes(db) && (include.length === 0 || include.includes(db))),
    );
    for (const [db, server] of this.forked) {
      if (!wanted.has(db)) {
        this.forked.delete(db);
        void server.close();
        this.settings.logger.info({ datname: db }, 'database gone; stopped scraping it');
      }
    }
    const added: TargetServer[] = [];
    for (const db of wanted) {
      if (this.forked.has(db)) continue;
      const server = this.createServer(urlForDatabase(this.settings.url, db), db, true);
      this.forked.set(db, server);
      added.push(server);
      this.settings.logger.info({ datname: db }, 'database discovered');
    }
    return added;
  }

  /**
   * Re-reads the collector definitions. On any error the old definitions stay in service and the
   * error is thrown for the caller to report (HTTP 500 "fail to reload: ...").
   */
  reload(): CollectorSet {
    const next = this.settings.loadCollectors();
    checkConstantLabels(next.collectors, this.settings.constantLabels, !this.settings.disableIntro);
    this.collectorSet = next;
    for (const server of this.servers()) server.replaceCollectors(next.collectors);
    for (const warning of next.warnings) this.settings.logger.warn(warning);
    this.settings.logger.info({ collectors: next.collectors.length, origin: next.origin }, 'collector configuration reloaded');
    return next;
  }

  async close(): Promise<void> {
    await this.inflight?.catch(() => undefined);
    await Promise.all(this.servers().map((s) => s.close()));
  }
}
