import type { Pool, PoolClient } from '../../lib/pg.js';
import type { Logger } from '../../lib/log.js';
import type { Collector } from './config/types.js';
import { createPool, databaseOf, isServerError, timedQuery } from './connection.js';
import type { RenderedFamily } from './exposition.js';
import { planCollectors, type PlanDecision, type ServerFacts } from './planner.js';
import { collectBatch } from './batch.js';
import { CollectorRuntime, describeError, type ClientLease, type CollectOutcome } from './runtime.js';
import { monotonicMs } from './clock.js';

export interface TargetSettings {
  url: string;
  /** Label value for self-metrics (the database name). */
  datname: string;
  forked: boolean;
  poolSize: number;
  connectTimeoutMs: number;
  serverTags: string[];
  constantLabels: ReadonlyArray<readonly [string, string]>;
  disableCache: boolean;
  logger: Logger;
}

export interface ServerScrape {
  up: boolean;
  families: RenderedFamily[];
  error?: string;
  facts?: ServerFacts;
}

const factsQuery = `SELECT current_setting('server_version_num')::int AS version,
  current_catalog, current_user, pg_catalog.pg_is_in_recovery(),
  (SELECT coalesce(json_agg(datname ORDER BY datname), '[]') FROM pg_catalog.pg_database WHERE datallowconn AND NOT datistemplate)::text,
  (SELECT coalesce(json_agg(nspname), '[]') FROM pg_catalog.pg_namespace)::text,
  (SELECT coalesce(json_agg(extname), '[]') FROM pg_catalog.pg_extension)::text`;

/**
 * One PostgreSQL database the exporter scrapes: the main URL or an auto-discovered database.
 * Each scrape runs a precheck (facts), re-plans when the version, role or database changed, then
 * runs fatal collectors first and the rest one after another on one connection.
 */
export class TargetServer {
  readonly pool: Pool;
  readonly pgbouncer: boolean;
  private collectors: Collector[];
  private runtimes: CollectorRuntime[] = [];
  private decisions: PlanDecision[] = [];
  private planned = false;
  private lastFacts: ServerFacts | undefined;
  /** The precheck row the last facts were parsed from: an unchanged row reuses them (no JSON parsing per scrape). */
  private lastFactsRow: string[] = [];
  readonly createdAt = Date.now();
  up = false;
  version = 0;
  inRecovery = false;
  scrapeCount = 0;
  scrapeErrorCount = 0;
  scrapeTotalSeconds = 0;
  lastScrapeSeconds = 0;
  lastError: string | undefined;

  constructor(
    readonly settings: TargetSettings,
    collectors: Collector[],
  ) {
    this.collectors = collectors;
    this.pgbouncer = databaseOf(settings.url) === 'pgbouncer';
    this.pool = createPool({ url: settings.url, max: settings.poolSize, connectTimeoutMs: settings.connectTimeoutMs, applicationName: 'pg_exporter' });
  }

  /** New collector definitions (reload): everything is planned again and the statistics restart. */
  replaceCollectors(collectors: Collector[]): void {
    this.collectors = collectors;
    this.planned = false;
    // Plan at once with what the last precheck saw, so /explain and /stat show the new set
    // immediately; the next scrape re-plans anyway if the server changed meanwhile.
    if (this.lastFacts) this.applyFacts(this.lastFacts);
  }

  installed(): CollectorRuntime[] {
    return this.runtimes;
  }

  planDecisions(): PlanDecision[] {
    return this.decisions;
  }

  facts(): ServerFacts | undefined {
    return this.lastFacts;
  }

  /** Connects, reads the facts and plans without running collectors (for --explain). */
  async prepare(): Promise<void> {
    const client = await this.pool.connect();
    try {
      this.applyFacts(await this.readFacts(client));
    } finally {
      client.release();
    }
  }

  async scrape(scrapeStartMs: number): Promise<ServerScrape> {
    const started = monotonicMs();
    this.scrapeCount++;
    const leases: PooledLease[] = [];
    const newLease = (): PooledLease => {
      const lease = pooledLease(this.pool);
      leases.push(lease);
      return lease;
    };
    const first = newLease();
    try {
      // A discovered database whose collectors are all cached needs no precheck round trip;
      // the main server always runs one, since pg_up and the role come from it.
      const cachedOnly = this.settings.forked && this.planned && this.lastFacts !== undefined && this.runtimes.every((r) => r.isFresh(scrapeStartMs, this.settings.disableCache));
      const facts = cachedOnly ? (this.lastFacts as ServerFacts) : await this.precheck(first);
      this.applyFacts(facts);
      const outcomes = await this.runCollectors(scrapeStartMs, first, newLease);
      const families: RenderedFamily[] = [];
      for (let i = 0; i < this.runtimes.length; i++) {
        const runtime = this.runtimes[i];
        const outcome = outcomes[i];
        for (const warning of outcome.warnings) this.settings.logger.debug({ collector: runtime.collector.branch, datname: this.settings.datname }, warning);
        if (!outcome.ok) {
          if (runtime.collector.fatal) throw new Error(`fatal collector ${runtime.collector.branch} failed: ${outcome.error}`);
          if (!outcome.cached) this.settings.logger.warn({ collector: runtime.collector.branch, datname: this.settings.datname, err: outcome.error }, 'collector failed');
          continue;
        }
        for (const family of outcome.families) families.push(family);
      }
      this.up = true;
      this.lastError = undefined;
      return { up: true, families, facts };
    } catch (error) {
      if (!isServerError(error)) first.discard();
      this.up = false;
      this.scrapeErrorCount++;
      this.lastError = describeError(error);
      return { up: false, families: [], error: this.lastError };
    } finally {
      for (const lease of leases) lease.release();
      this.lastScrapeSeconds = (monotonicMs() - started) / 1000;
      this.scrapeTotalSeconds += this.lastScrapeSeconds;
    }
  }

  /**
   * Every installed collector's outcome, in plan order. Cached ones answer at once; the rest run
   * on as many connections as the pool allows (two for the main server), batched where they can
   * be (batch.ts), so the round trips of one connection overlap the other's. Fatal collectors
   * run first, alone: when one fails, nothing else runs.
   */
  private async runCollectors(scrapeStartMs: number, first: PooledLease, newLease: () => PooledLease): Promise<CollectOutcome[]> {
    const disableCache = this.settings.disableCache;
    const outcomes: Array<CollectOutcome | undefined> = this.runtimes.map((r) => r.cachedOutcome(scrapeStartMs, disableCache));
    const pending: number[] = [];
    for (let i = 0; i < outcomes.length; i++) {
      if (outcomes[i] !== undefined) continue;
      if (!this.runtimes[i].collector.fatal) {
        pending.push(i);
        continue;
      }
      const outcome = await this.runtimes[i].collect(first, scrapeStartMs, disableCache);
      outcomes[i] = outcome;
      if (!outcome.ok) return outcomes.map((o) => o ?? skippedOutcome);
    }
    // Each connection sends its share of the batchable collectors as one batch, then takes the
    // others one at a time from a shared queue.
    const batchable = pending.filter((i) => this.runtimes[i].batchable());
    const single = pending.filter((i) => !this.runtimes[i].batchable());
    const lanes = Math.max(1, Math.min(this.settings.poolSize, Math.max(single.length, Math.ceil(batchable.length / 2))));
    let next = 0;
    const lane = async (n: number, lease: PooledLease): Promise<void> => {
      const mine = batchable.filter((_, k) => k % lanes === n);
      const batched = await collectBatch(
        mine.map((i) => this.runtimes[i]),
        lease,
        scrapeStartMs,
        disableCache,
      );
      mine.forEach((i, k) => (outcomes[i] = batched[k]));
      while (next < single.length) {
        const i = single[next++];
        outcomes[i] = await this.runtimes[i].collect(lease, scrapeStartMs, disableCache);
      }
    };
    await Promise.all(Array.from({ length: lanes }, (_, n) => lane(n, n === 0 ? first : newLease())));
    return outcomes.map((o) => o ?? skippedOutcome);
  }

  /**
   * The precheck, retried once on a fresh connection when the pooled one turns out to be dead
   * (server restarted, backend terminated): nothing has run yet, so a retry is safe.
   */
  private async precheck(lease: ClientLease): Promise<ServerFacts> {
    try {
      return await this.readFacts(await lease.get());
    } catch (error) {
      if (!isStaleConnection(error)) throw error;
      lease.discard();
      return this.readFacts(await lease.get());
    }
  }

  private async readFacts(client: PoolClient): Promise<ServerFacts> {
    if (this.pgbouncer) return this.readPgbouncerFacts(client);
    const output = await timedQuery(client, factsQuery, this.settings.connectTimeoutMs);
    const row = output.rows[0] as string[];
    if (this.lastFacts && !this.lastFacts.pgbouncer && row.length === this.lastFactsRow.length && row.every((cell, i) => cell === this.lastFactsRow[i])) return this.lastFacts;
    this.lastFactsRow = row;
    return {
      version: Number(row[0]),
      datname: row[1],
      username: row[2],
      inRecovery: row[3] === 't',
      databases: JSON.parse(row[4]) as string[],
      schemas: JSON.parse(row[5]) as string[],
      extensions: JSON.parse(row[6]) as string[],
      forked: this.settings.forked,
      pgbouncer: this.pgbouncer,
      serverTags: this.settings.serverTags,
    };
  }

  /** The pgbouncer admin console has no catalog: only its version (SHOW VERSION) matters for planning. */
  private async readPgbouncerFacts(client: PoolClient): Promise<ServerFacts> {
    const output = await timedQuery(client, 'SHOW VERSION', this.settings.connectTimeoutMs, false);
    const text = String((output.rows[0] as unknown[] | undefined)?.[0] ?? '');
    return {
      version: pgbouncerVersion(text),
      datname: 'pgbouncer',
      username: decodeURIComponent(new URL(this.settings.url).username),
      inRecovery: false,
      databases: [],
      schemas: [],
      extensions: [],
      forked: false,
      pgbouncer: true,
      serverTags: this.settings.serverTags,
    };
  }

  /** Re-plans when never planned or when the version, recovery state or database changed. */
  private applyFacts(facts: ServerFacts): void {
    const previous = this.lastFacts;
    this.lastFacts = facts;
    this.version = facts.version;
    this.inRecovery = facts.inRecovery;
    const changed = !previous || previous.version !== facts.version || previous.inRecovery !== facts.inRecovery || previous.datname !== facts.datname;
    if (this.planned && !changed) return;
    const plan = planCollectors(this.collectors, facts);
    this.decisions = plan.decisions;
    this.runtimes = plan.installed.map((c) => new CollectorRuntime(c, this.settings.constantLabels, !this.pgbouncer));
    this.planned = true;
    this.settings.logger.info({ datname: this.settings.datname, version: facts.version, inRecovery: facts.inRecovery, installed: this.runtimes.length, total: this.collectors.length }, 'planned collectors');
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** Errors that mean "this connection is gone", not "the server refuses": admin/crash shutdown, class 08, or no SQLSTATE. */
function isStaleConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return (error as Error)?.message !== undefined && /terminat|ended|closed|ECONNRESET|EPIPE/i.test((error as Error).message);
  return code === '57P01' || code === '57P02' || code.startsWith('08') || code === 'ECONNRESET' || code === 'EPIPE';
}

/** "PgBouncer 1.18.0" → 11800 (major·10000 + minor·100 + patch); 0 when unknown (older versions answer with a NOTICE). */
export function pgbouncerVersion(text: string): number {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return match ? Number(match[1]) * 10000 + Number(match[2]) * 100 + Number(match[3] ?? 0) : 0;
}

/** A lease that connects on first use and is released (or discarded) by the scrape that made it. */
interface PooledLease extends ClientLease {
  release(): void;
}

function pooledLease(pool: Pool): PooledLease {
  let current: PoolClient | undefined;
  return {
    get: async () => (current ??= await pool.connect()),
    discard: () => {
      current?.release(true);
      current = undefined;
    },
    release: () => {
      current?.release();
      current = undefined;
    },
  };
}

/** Stands in for collectors left out after a fatal collector failed; the scrape fails anyway. */
const skippedOutcome: CollectOutcome = { families: [], ok: true, cached: false, skipped: true, warnings: [] };
