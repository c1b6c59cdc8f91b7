import type pg from 'pg';
import type { Collector } from '../config/types.js';
import { isServerError, timedQuery, type BatchStatement, type QueryOutput } from './connection.js';
import { preparedStatement } from './prepared.js';
import type { RenderedFamily } from '../text/exposition.js';
import { transformRows, type Cell } from './transform.js';
import { monotonicMs } from '../process/clock.js';

/** Hands out the scrape's connection; `discard()` drops a broken one so the next get() reconnects. */
export interface ClientLease {
  get(): Promise<pg.PoolClient>;
  /** Destroys the current connection (after a client-side timeout) so the next get() reconnects. */
  discard(): void;
}

export interface CollectorStats {
  total: number;
  hit: number;
  error: number;
  skip: number;
  /** Samples in the last result. */
  metric: number;
  /** Seconds of the last real execution. */
  duration: number;
}

export interface CollectOutcome {
  families: RenderedFamily[];
  ok: boolean;
  error?: string;
  cached: boolean;
  skipped: boolean;
  warnings: string[];
}

const boolOid = 16;
const noWarnings: string[] = [];

/**
 * One installed collector on one server: its TTL cache, predicate caches and statistics.
 * The cache is keyed on scrape start times so TTL windows line up with scrapes; a failed
 * execution is cached too (the error sticks for the TTL), as in pg_exporter.
 */
export class CollectorRuntime {
  readonly stats: CollectorStats = { total: 0, hit: 0, error: 0, skip: 0, metric: 0, duration: 0 };
  private lastExecAt = -Infinity;
  private lastScrapeAt = -Infinity;
  private families: RenderedFamily[] = [];
  private lastError: string | undefined;
  private lastSkipped = false;
  private readonly predicateCache = new Map<number, { at: number; pass: boolean }>();
  /** The outcome cached scrapes get, made once per result. */
  private kept: CollectOutcome | undefined;
  /** The query is one statement (decided once: the text never changes, and scrapes ask each time). */
  private readonly singleStatement: boolean;
  /** The query as a batch statement, with its prepared statement's name where it can have one (decided once). */
  readonly batchStatement: BatchStatement;

  constructor(
    readonly collector: Collector,
    private readonly constantLabels: ReadonlyArray<readonly [string, string]>,
    private readonly useStatementTimeout: boolean,
  ) {
    this.singleStatement = !collector.query.replace(/[\s;]+$/, '').includes(';');
    this.batchStatement = preparedStatement(collector.query, collector.timeout * 1000);
  }

  /** Seconds left before the cached result expires, as of the last scrape (0..ttl). */
  remainingTtl(): number {
    if (!Number.isFinite(this.lastExecAt)) return 0;
    const left = this.collector.ttl - (this.lastScrapeAt - this.lastExecAt) / 1000;
    return Math.max(0, Math.min(this.collector.ttl, left));
  }

  lastErrorMessage(): string | undefined {
    return this.lastError;
  }

  /** True when a scrape starting now would be served from the cache. */
  isFresh(scrapeStartMs: number, disableCache: boolean): boolean {
    return !disableCache && this.collector.ttl > 0 && scrapeStartMs - this.lastExecAt <= this.collector.ttl * 1000;
  }

  /**
   * The cached outcome when the result is still fresh (counted as a hit), else undefined and
   * nothing counted. Synchronous, and the outcome object is kept with the result, so a cached
   * collector costs a scrape neither a promise nor an allocation.
   */
  cachedOutcome(scrapeStartMs: number, disableCache: boolean): CollectOutcome | undefined {
    if (!this.isFresh(scrapeStartMs, disableCache)) return undefined;
    this.stats.total++;
    this.lastScrapeAt = scrapeStartMs;
    this.stats.hit++;
    if (this.lastError !== undefined) this.stats.error++;
    this.kept ??= {
      families: this.families,
      ok: this.lastError === undefined,
      error: this.lastError,
      cached: true,
      skipped: this.lastSkipped,
      warnings: noWarnings,
    };
    return this.kept;
  }

  async collect(lease: ClientLease, scrapeStartMs: number, disableCache: boolean): Promise<CollectOutcome> {
    const cached = this.cachedOutcome(scrapeStartMs, disableCache);
    if (cached) return cached;
    this.begin(scrapeStartMs);
    const started = monotonicMs();
    try {
      const passed = await this.checkPredicates(lease, scrapeStartMs, disableCache);
      if (!passed) {
        this.stats.skip++;
        this.families = [];
        this.lastError = undefined;
        this.lastSkipped = true;
        this.stats.metric = 0;
        return { families: [], ok: true, cached: false, skipped: true, warnings: [] };
      }
      return this.succeed(await this.query(lease, this.collector.query));
    } catch (error) {
      return this.fail(error);
    } finally {
      this.stats.duration = (monotonicMs() - started) / 1000;
    }
  }

  /**
   * True when the collector's query may share a round trip with others (see batch.ts): one
   * statement, no predicate query to run first, a server that takes statement_timeout, and no
   * error the last time, so that a failing collector does not keep failing a whole batch.
   */
  batchable(): boolean {
    return this.useStatementTimeout && this.singleStatement && this.collector.predicateQueries.length === 0 && this.lastError === undefined;
  }

  /** Counts an execution that starts now (not a cache hit). */
  begin(scrapeStartMs: number): void {
    this.stats.total++;
    this.lastScrapeAt = scrapeStartMs;
    this.lastExecAt = scrapeStartMs;
    this.kept = undefined;
  }

  /** Takes a query's answer as this execution's result. */
  succeed(output: QueryOutput): CollectOutcome {
    const transformed = transformRows(this.collector, output.fields, output.rows as Cell[][], this.constantLabels);
    this.families = transformed.families;
    this.lastError = undefined;
    this.lastSkipped = false;
    this.stats.metric = transformed.sampleCount;
    return { families: this.families, ok: true, cached: false, skipped: false, warnings: transformed.warnings };
  }

  /** Takes an error as this execution's result. */
  fail(error: unknown): CollectOutcome {
    this.families = [];
    this.lastError = describeError(error);
    this.lastSkipped = false;
    this.stats.error++;
    this.stats.metric = 0;
    return { families: [], ok: false, error: this.lastError, cached: false, skipped: false, warnings: [] };
  }

  private async query(lease: ClientLease, text: string) {
    const client = await lease.get();
    try {
      return await timedQuery(client, text, this.collector.timeout * 1000, this.useStatementTimeout);
    } catch (error) {
      // After a client-side timeout or a network error the connection cannot be trusted.
      if (!isServerError(error)) lease.discard();
      throw error;
    }
  }

  /** True when every predicate passes; false means "skip this time"; malformed answers throw. */
  private async checkPredicates(lease: ClientLease, scrapeStartMs: number, disableCache: boolean): Promise<boolean> {
    const predicates = this.collector.predicateQueries;
    for (let i = 0; i < predicates.length; i++) {
      const predicate = predicates[i];
      const cached = this.predicateCache.get(i);
      let pass: boolean;
      if (cached && !disableCache && predicate.ttl > 0 && scrapeStartMs - cached.at <= predicate.ttl * 1000) {
        pass = cached.pass;
      } else {
        const output = await this.query(lease, predicate.query);
        pass = predicateAnswer(predicate.name, output.fields, output.rows);
        this.predicateCache.set(i, { at: scrapeStartMs, pass });
      }
      if (!pass) return false;
    }
    return true;
  }
}

function predicateAnswer(name: string, fields: Array<{ dataTypeID: number }>, rows: unknown[][]): boolean {
  if (rows.length === 0) return false;
  if (rows.length > 1) throw new Error(`predicate "${name}" returned ${rows.length} rows, expected one`);
  if (fields.length !== 1 || fields[0].dataTypeID !== boolOid) throw new Error(`predicate "${name}" must return exactly one boolean column`);
  return rows[0][0] === 't';
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? `${error.message} (SQLSTATE ${code})` : error.message;
  }
  return String(error);
}
