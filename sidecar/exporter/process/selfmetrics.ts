import type { ByteWriter } from '../text/bytewriter.js';
import { familyHead, formatValue, renderLabels, type FamilyType } from '../text/exposition.js';
import type { CollectorRuntime } from '../scrape/runtime.js';
import type { TargetServer } from '../scrape/server.js';

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

interface KeptLabels {
  /** Label text, the key for de-duplication. */
  labels: string;
  /** `name{labels} ` per family key, encoded once. */
  prefixes: Map<FamilyKey, Buffer>;
}

const perServerKeys = ['serverDuration', 'serverTotalSeconds', 'serverTotal', 'serverErrors'] as const satisfies readonly FamilyKey[];
const perQueryKeys = [
  'queryTtl',
  'queryTotal',
  'queryHits',
  'queryErrors',
  'querySkips',
  'queryMetrics',
  'queryDuration',
] as const satisfies readonly FamilyKey[];

/**
 * pg_up / pg_version / pg_in_recovery / build info and the exporter's own statistics, named as
 * pg_exporter names them (namespace configurable). Counts are gauges there, and stay gauges here.
 *
 * Written as bytes: headers and each series' `name{labels} ` are encoded once (per server and per
 * installed collector, keyed by identity; runtimes are new objects after every re-plan), so a
 * scrape only writes values. The ~7 series per collector are most of a cached scrape's output.
 */
export class SelfMetrics {
  private readonly names: Record<FamilyKey, string>;
  private readonly heads: Record<FamilyKey, Buffer>;
  private readonly plainPrefixes: Record<FamilyKey, Buffer>;
  private readonly buildPrefix: Buffer;
  private readonly serverLabels = new WeakMap<TargetServer, KeptLabels>();
  private readonly queryLabels = new WeakMap<CollectorRuntime, KeptLabels>();
  private readonly repeats = new WeakMap<CollectorRuntime[], boolean>();

  constructor(
    namespace: string,
    private readonly constantLabels: Pairs,
    build: BuildInfo,
  ) {
    const keys = Object.keys(families) as FamilyKey[];
    const each = <T>(make: (key: FamilyKey, name: string) => T) =>
      Object.fromEntries(keys.map((key) => [key, make(key, `${namespace}_${families[key][0]}`)])) as Record<FamilyKey, T>;
    this.names = each((_key, name) => name);
    this.heads = each((key, name) => Buffer.from(familyHead(name, families[key][1], families[key][2])));
    const plain = renderLabels(constantLabels);
    this.plainPrefixes = each((_key, name) => Buffer.from(`${name}${plain} `));
    this.buildPrefix = Buffer.from(`${this.names.build}${renderLabels([...Object.entries(build), ...constantLabels])} `);
  }

  /** Every family name this renderer can emit (the exporter checks collector output against it). */
  familyNames(): string[] {
    return Object.values(this.names);
  }

  write(w: ByteWriter, s: ExporterSnapshot): void {
    const single = (key: FamilyKey, value: number, prefix = this.plainPrefixes[key]): void => {
      w.bytes(this.heads[key]);
      w.sample(prefix, formatValue(value));
    };
    single('up', s.main.up ? 1 : 0);
    single('version', s.main.version);
    single('inRecovery', s.main.inRecovery ? 1 : 0);
    single('build', 1, this.buildPrefix);
    single('exporterUp', 1);
    single('uptime', (Date.now() - s.startedAtMs) / 1000);
    single('lastScrapeTime', s.lastScrapeAtMs / 1000);
    single('scrapeDuration', s.lastScrapeSeconds);
    single('scrapeTotal', s.scrapeCount);
    single('scrapeErrors', s.scrapeErrorCount);
    single('lastScrapeError', s.lastScrapeFailed ? 1 : 0);
    this.perServer(w, s.servers, 'serverDuration', (x) => x.lastScrapeSeconds);
    this.perServer(w, s.servers, 'serverTotalSeconds', (x) => x.scrapeTotalSeconds);
    this.perServer(w, s.servers, 'serverTotal', (x) => x.scrapeCount);
    this.perServer(w, s.servers, 'serverErrors', (x) => x.scrapeErrorCount);
    const repeat = s.servers.some((server) => this.repeatsOn(server.installed()));
    this.perQuery(w, s.servers, repeat, 'queryTtl', (r) => r.remainingTtl());
    this.perQuery(w, s.servers, repeat, 'queryTotal', (r) => r.stats.total);
    this.perQuery(w, s.servers, repeat, 'queryHits', (r) => r.stats.hit);
    this.perQuery(w, s.servers, repeat, 'queryErrors', (r) => r.stats.error);
    this.perQuery(w, s.servers, repeat, 'querySkips', (r) => r.stats.skip, true);
    this.perQuery(w, s.servers, repeat, 'queryMetrics', (r) => r.stats.metric);
    this.perQuery(w, s.servers, repeat, 'queryDuration', (r) => r.stats.duration);
  }

  private repeatsOn(runtimes: CollectorRuntime[]): boolean {
    let known = this.repeats.get(runtimes);
    if (known === undefined) {
      known = namespacesRepeat(runtimes);
      this.repeats.set(runtimes, known);
    }
    return known;
  }

  private kept(labels: Pairs, keys: readonly FamilyKey[]): KeptLabels {
    const text = renderLabels([...labels, ...this.constantLabels]);
    return { labels: text, prefixes: new Map(keys.map((key) => [key, Buffer.from(`${this.names[key]}${text} `)])) };
  }

  private perServer(w: ByteWriter, servers: TargetServer[], key: FamilyKey, value: ServerValue): void {
    if (servers.length === 0) return;
    w.bytes(this.heads[key]);
    for (const server of servers) {
      let kept = this.serverLabels.get(server);
      if (kept === undefined) {
        kept = this.kept([['datname', server.settings.datname]], perServerKeys);
        this.serverLabels.set(server, kept);
      }
      w.sample(kept.prefixes.get(key) as Buffer, formatValue(value(server)));
    }
  }

  /** One series per installed collector and server; when namespaces repeat, the first series wins. */
  private perQuery(w: ByteWriter, servers: TargetServer[], repeat: boolean, key: FamilyKey, value: RuntimeValue, onlyPredicates = false): void {
    const seen = repeat ? new Set<string>() : undefined;
    let started = false;
    for (const server of servers) {
      for (const runtime of server.installed()) {
        if (onlyPredicates && runtime.collector.predicateQueries.length === 0) continue;
        let kept = this.queryLabels.get(runtime);
        if (kept === undefined) {
          kept = this.kept(
            [
              ['datname', server.settings.datname],
              ['query', runtime.collector.name],
            ],
            perQueryKeys,
          );
          this.queryLabels.set(runtime, kept);
        }
        if (seen) {
          if (seen.has(kept.labels)) continue;
          seen.add(kept.labels);
        }
        if (!started) {
          w.bytes(this.heads[key]);
          started = true;
        }
        w.sample(kept.prefixes.get(key) as Buffer, formatValue(value(runtime)));
      }
    }
  }
}
