import { renderLabels, sampleLine, type FamilyType, type RenderedFamily } from './exposition.js';
import type { TargetServer } from './server.js';

export interface BuildInfo {
  version: string;
  revision: string;
  branch: string;
  builddate: string;
  goversion: string;
  goos: string;
  goarch: string;
}

export interface ExporterSnapshot {
  namespace: string;
  constantLabels: ReadonlyArray<readonly [string, string]>;
  build: BuildInfo;
  startedAtMs: number;
  lastScrapeAtMs: number;
  lastScrapeSeconds: number;
  scrapeCount: number;
  scrapeErrorCount: number;
  lastScrapeFailed: boolean;
  main: TargetServer;
  servers: TargetServer[];
}

type Pairs = Array<readonly [string, string]>;

class FamilyBuilder {
  readonly families: RenderedFamily[] = [];
  constructor(
    private readonly constant: ReadonlyArray<readonly [string, string]>,
    private readonly namespacesRepeat: boolean,
  ) {}

  add(name: string, type: FamilyType, help: string, samples: Array<[Pairs, number]>): void {
    const lines = samples.map(([labels, value]) => sampleLine(name, renderLabels([...labels, ...this.constant]), value));
    // Per-query series are keyed by namespace, which two installed branches may share.
    this.families.push({ name, type, help, lines, mayRepeat: this.namespacesRepeat });
  }
}

/** True when two collectors installed on one server share a namespace (their self-metric series would repeat). */
function namespacesRepeat(servers: TargetServer[]): boolean {
  return servers.some((server) => {
    const names = server.installed().map((r) => r.collector.name);
    return new Set(names).size !== names.length;
  });
}

/**
 * pg_up / pg_version / pg_in_recovery / build info and the exporter's own statistics, named as
 * pg_exporter names them (namespace configurable). Counts are gauges there, and stay gauges here.
 */
export function renderIntroFamilies(s: ExporterSnapshot): RenderedFamily[] {
  const ns = s.namespace;
  const b = new FamilyBuilder(s.constantLabels, namespacesRepeat(s.servers));
  const none: Pairs = [];
  b.add(`${ns}_up`, 'gauge', 'last scrape was able to connect to the server: 1 for yes, 0 for no', [[none, s.main.up ? 1 : 0]]);
  b.add(`${ns}_version`, 'gauge', 'server version number', [[none, s.main.version]]);
  b.add(`${ns}_in_recovery`, 'gauge', 'server is in recovery mode? 1 for yes 0 for no', [[none, s.main.inRecovery ? 1 : 0]]);
  const buildLabels: Pairs = Object.entries(s.build);
  b.add(`${ns}_exporter_build_info`, 'gauge', 'A metric with a constant 1 value labeled with version, revision, branch, builddate, goversion, goos and goarch', [[buildLabels, 1]]);
  b.add(`${ns}_exporter_up`, 'gauge', 'always be 1 if your could retrieve metrics', [[none, 1]]);
  b.add(`${ns}_exporter_uptime`, 'gauge', 'seconds since exporter primary server inited', [[none, (Date.now() - s.startedAtMs) / 1000]]);
  b.add(`${ns}_exporter_last_scrape_time`, 'gauge', 'seconds exporter spending on scrapping', [[none, s.lastScrapeAtMs / 1000]]);
  b.add(`${ns}_exporter_scrape_duration`, 'gauge', 'seconds exporter spending on scrapping', [[none, s.lastScrapeSeconds]]);
  b.add(`${ns}_exporter_scrape_total_count`, 'counter', 'times exporter was scraped for metrics', [[none, s.scrapeCount]]);
  b.add(`${ns}_exporter_scrape_error_count`, 'counter', 'times exporter was scraped for metrics and failed', [[none, s.scrapeErrorCount]]);
  b.add(`${ns}_exporter_last_scrape_error`, 'gauge', '1 if the last scrape failed (main server not up), else 0', [[none, s.lastScrapeFailed ? 1 : 0]]);

  const perServer = (value: (server: TargetServer) => number): Array<[Pairs, number]> => s.servers.map((server) => [[['datname', server.settings.datname]], value(server)]);
  b.add(`${ns}_exporter_server_scrape_duration`, 'gauge', 'seconds exporter server spending on scrapping last scrape', perServer((x) => x.lastScrapeSeconds));
  b.add(`${ns}_exporter_server_scrape_total_seconds`, 'gauge', 'seconds exporter server spending on scrapping', perServer((x) => x.scrapeTotalSeconds));
  b.add(`${ns}_exporter_server_scrape_total_count`, 'gauge', 'times exporter server was scraped for metrics', perServer((x) => x.scrapeCount));
  b.add(`${ns}_exporter_server_scrape_error_count`, 'gauge', 'times exporter server was scraped and failed', perServer((x) => x.scrapeErrorCount));

  const perQuery = (value: (r: ReturnType<TargetServer['installed']>[number]) => number, onlyPredicates = false): Array<[Pairs, number]> => {
    const samples: Array<[Pairs, number]> = [];
    for (const server of s.servers) {
      for (const runtime of server.installed()) {
        if (onlyPredicates && runtime.collector.predicateQueries.length === 0) continue;
        samples.push([[['datname', server.settings.datname], ['query', runtime.collector.name]], value(runtime)]);
      }
    }
    return samples;
  };
  b.add(`${ns}_exporter_query_cache_ttl`, 'gauge', 'time to live of query cache', perQuery((r) => r.remainingTtl()));
  b.add(`${ns}_exporter_query_scrape_total_count`, 'gauge', 'times exporter server was scraped for metrics', perQuery((r) => r.stats.total));
  b.add(`${ns}_exporter_query_scrape_hit_count`, 'gauge', 'numbers been scrapped from cache', perQuery((r) => r.stats.hit));
  b.add(`${ns}_exporter_query_scrape_error_count`, 'gauge', 'times the query failed', perQuery((r) => r.stats.error));
  b.add(`${ns}_exporter_query_scrape_predicate_skip_count`, 'gauge', 'times the query was skipped due to a predicate returning false', perQuery((r) => r.stats.skip, true));
  b.add(`${ns}_exporter_query_scrape_metric_count`, 'gauge', 'numbers of metrics been scrapped from this query', perQuery((r) => r.stats.metric));
  b.add(`${ns}_exporter_query_scrape_duration`, 'gauge', 'seconds query spending on scrapping', perQuery((r) => r.stats.duration));
  return b.families;
}
