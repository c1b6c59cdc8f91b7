import { blockFamily, formatValue, renderLabels, type FamilyType, type RenderedFamily } from './exposition.js';
import type { CollectorRuntime } from './runtime.js';
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

/** What changes from one scrape to the next; the renderer keeps what does not. */
export interface ExporterSnapshot {
  startedAtMs: number;
  lastScrapeAtMs: number;
  lastScrapeSeconds: number;
  scrapeCount: number;
  scrapeErrorCount: number;
  lastScrapeFailed: boolean;
  main: TargetServer;
  servers: TargetServer[];
}

type Pairs = ReadonlyArray<readonly [string, string]>;
type RuntimeValue = (r: CollectorRuntime) => number;
type ServerValue = (s: TargetServer) => number;

/** Suffix (after the namespace), type and help of every self-metric, as pg_exporter names them. */
const families = {
  up: ['up', 'gauge', 'last scrape was able to connect to the server: 1 for yes, 0 for no'],
  version: ['version', 'gauge', 'server version number'],
  inRecovery: ['in_recovery', 'gauge', 'server is in recovery mode? 1 for yes 0 for no'],
  build: ['exporter_build_info', 'gauge', 'A metric with a constant 1 value labeled with version, revision, branch, builddate, goversion, goos and goarch'],
  exporterUp: ['exporter_up', 'gauge', 'always be 1 if your could retrieve metrics'],
  uptime: ['exporter_uptime', 'gauge', 'seconds since exporter primary server inited'],
  lastScrapeTime: ['exporter_last_scrape_time', 'gauge', 'seconds exporter spending on scrapping'],
  scrapeDuration: ['exporter_scrape_duration', 'gauge', 'seconds exporter spending on scrapping'],
  scrapeTotal: ['exporter_scrape_total_count', 'counter', 'times exporter was scraped for metrics'],
  scrapeErrors: ['exporter_scrape_error_count', 'counter', 'times exporter was scraped for metrics and failed'],
  lastScrapeError: ['exporter_last_scrape_error', 'gauge', '1 if the last scrape failed (main server not up), else 0'],
  serverDuration: ['exporter_server_scrape_duration', 'gauge', 'seconds exporter server spending on scrapping last scrape'],
  serverTotalSeconds: ['exporter_server_scrape_total_seconds', 'gauge', 'seconds exporter server spending on scrapping'],
  serverTotal: ['exporter_server_scrape_total_count', 'gauge', 'times exporter server was scraped for metrics'],
  serverErrors: ['exporter_server_scrape_error_count', 'gauge', 'times exporter server was scraped and failed'],
  queryTtl: ['exporter_query_cache_ttl', 'gauge', 'time to live of query cache'],
  queryTotal: ['exporter_query_scrape_total_count', 'gauge', 'times exporter server was scraped for metrics'],
  queryHits: ['exporter_query_scrape_hit_count', 'gauge', 'numbers been scrapped from cache'],
  queryErrors: ['exporter_query_scrape_error_count', 'gauge', 'times the query failed'],
  querySkips: ['exporter_query_scrape_predicate_skip_count', 'gauge', 'times the query was skipped due to a predicate returning false'],
  queryMetrics: ['exporter_query_scrape_metric_count', 'gauge', 'numbers of metrics been scrapped from this query'],
  queryDuration: ['exporter_query_scrape_duration', 'gauge', 'seconds query spending on scrapping'],
} as const satisfies Record<string, readonly [string, FamilyType, string]>;

type FamilyKey = keyof typeof families;

/** True when two collectors installed on one server share a namespace (their self-metric series would repeat). */
function namespacesRepeat(runtimes: CollectorRuntime[]): boolean {
  const names = new Set<string>();
  for (const r of runtimes) {
    if (names.has(r.collector.name)) return true;
    names.add(r.collector.name);
  }
  return false;
}

/**
 * pg_up / pg_version / pg_in_recovery / build info and the exporter's own statistics, named as
 * pg_exporter names them (namespace configurable). Counts are gauges there, and stay gauges here.
 *
 * Rendered straight into text: label strings are built once per server and per installed
 * collector (the runtimes are replaced on every re-plan, so caching by identity stays correct),
 * so a scrape only appends values. The ~7 series per collector are most of a cached scrape's output.
 */
export class SelfMetrics {
  private readonly names: Record<FamilyKey, string>;
  private readonly plainLabels: string;
  private readonly buildLabels: string;
  private readonly serverLabels = new WeakMap<TargetServer, string>();
  private readonly queryLabels = new WeakMap<CollectorRuntime, string>();
  private readonly repeats = new WeakMap<CollectorRuntime[], boolean>();

  constructor(
    namespace: string,
    private readonly constantLabels: Pairs,
    build: BuildInfo,
  ) {
    this.names = Object.fromEntries(Object.entries(families).map(([key, [suffix]]) => [key, `${namespace}_${suffix}`])) as Record<FamilyKey, string>;
    this.plainLabels = renderLabels(constantLabels);
    this.buildLabels = renderLabels([...Object.entries(build), ...constantLabels]);
  }

  /** Every family name this renderer can emit (the exporter checks collector output against it). */
  familyNames(): string[] {
    return Object.values(this.names);
  }

  render(s: ExporterSnapshot): RenderedFamily[] {
    const out: RenderedFamily[] = [];
    const single = (key: FamilyKey, value: number, labels = this.plainLabels): void => {
      out.push(this.family(key, `${this.names[key]}${labels} ${formatValue(value)}`));
    };
    single('up', s.main.up ? 1 : 0);
    single('version', s.main.version);
    single('inRecovery', s.main.inRecovery ? 1 : 0);
    single('build', 1, this.buildLabels);
    single('exporterUp', 1);
    single('uptime', (Date.now() - s.startedAtMs) / 1000);
    single('lastScrapeTime', s.lastScrapeAtMs / 1000);
    single('scrapeDuration', s.lastScrapeSeconds);
    single('scrapeTotal', s.scrapeCount);
    single('scrapeErrors', s.scrapeErrorCount);
    single('lastScrapeError', s.lastScrapeFailed ? 1 : 0);
    this.perServer(out, s.servers, 'serverDuration', (x) => x.lastScrapeSeconds);
    this.perServer(out, s.servers, 'serverTotalSeconds', (x) => x.scrapeTotalSeconds);
    this.perServer(out, s.servers, 'serverTotal', (x) => x.scrapeCount);
    this.perServer(out, s.servers, 'serverErrors', (x) => x.scrapeErrorCount);
    const repeat = s.servers.some((server) => this.repeatsOn(server.installed()));
    this.perQuery(out, s.servers, repeat, 'queryTtl', (r) => r.remainingTtl());
    this.perQuery(out, s.servers, repeat, 'queryTotal', (r) => r.stats.total);
    this.perQuery(out, s.servers, repeat, 'queryHits', (r) => r.stats.hit);
    this.perQuery(out, s.servers, repeat, 'queryErrors', (r) => r.stats.error);
    this.perQuery(out, s.servers, repeat, 'querySkips', (r) => r.stats.skip, true);
    this.perQuery(out, s.servers, repeat, 'queryMetrics', (r) => r.stats.metric);
    this.perQuery(out, s.servers, repeat, 'queryDuration', (r) => r.stats.duration);
    return out;
  }

  private family(key: FamilyKey, block: string): RenderedFamily {
    const [, type, help] = families[key];
    return blockFamily(this.names[key], type, help, block);
  }

  private repeatsOn(runtimes: CollectorRuntime[]): boolean {
    let known = this.repeats.get(runtimes);
    if (known === undefined) {
      known = namespacesRepeat(runtimes);
      this.repeats.set(runtimes, known);
    }
    return known;
  }

  private perServer(out: RenderedFamily[], servers: TargetServer[], key: FamilyKey, value: ServerValue): void {
    const name = this.names[key];
    let block = '';
    for (const server of servers) {
      let labels = this.serverLabels.get(server);
      if (labels === undefined) {
        labels = renderLabels([['datname', server.settings.datname], ...this.constantLabels]);
        this.serverLabels.set(server, labels);
      }
      block += `${block === '' ? '' : '\n'}${name}${labels} ${formatValue(value(server))}`;
    }
    if (block !== '') out.push(this.family(key, block));
  }

  /** One series per installed collector and server; when namespaces repeat, the first series wins. */
  private perQuery(out: RenderedFamily[], servers: TargetServer[], repeat: boolean, key: FamilyKey, value: RuntimeValue, onlyPredicates = false): void {
    const name = this.names[key];
    const seen = repeat ? new Set<string>() : undefined;
    let block = '';
    for (const server of servers) {
      for (const runtime of server.installed()) {
        if (onlyPredicates && runtime.collector.predicateQueries.length === 0) continue;
        const labels = this.queryLabelsOf(server, runtime);
        if (seen) {
          if (seen.has(labels)) continue;
          seen.add(labels);
        }
        block += `${block === '' ? '' : '\n'}${name}${labels} ${formatValue(value(runtime))}`;
      }
    }
    if (block !== '') out.push(this.family(key, block));
  }

  private queryLabelsOf(server: TargetServer, runtime: CollectorRuntime): string {
    let labels = this.queryLabels.get(runtime);
    if (labels === undefined) {
      labels = renderLabels([['datname', server.settings.datname], ['query', runtime.collector.name], ...this.constantLabels]);
      this.queryLabels.set(runtime, labels);
    }
    return labels;
  }
}
