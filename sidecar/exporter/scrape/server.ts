import type { Pool, PoolClient } from '../../../lib/pg.js';
import type { Logger } from '../../../lib/log.js';
import type { Collector } from '../config/types.js';
import { createPool, databaseOf, isServerError, timedQuery, type BatchStatement, type QueryOutput } from './connection.js';
import { factsFromRow, factsQuery, needsReplan, pgbouncerVersion } from './facts.js';
import { preparedStatement } from './prepared.js';
import type { RenderedFamily } from '../text/exposition.js';
import { planCollectors, type PlanDecision, type ServerFacts } from './planner.js';
import { collectBatch } from './batch.js';
import { CollectorRuntime, describeError, type ClientLease, type CollectOutcome } from './runtime.js';
import { monotonicMs } from '../process/clock.js';

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

/**
 * One PostgreSQL database the exporter scrapes: the main URL or an auto-discovered database.
 * Each scrape reads the server's facts (facts.ts), re-plans when the version, recovery state or
 * database changed, and runs the collectors: fatal ones first, the rest in batches on the pool's
 * connections (batch.ts).
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
  /** Batched queries run as prepared statements, until the server shows it does not keep them. */
  private prepareStatements: boolean;
  /** The facts query as the lead of a batch. */
  private readonly factsStatement: BatchStatement;
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
    this.prepareStatements = !this.pgbouncer;
    this.factsStatement = preparedStatement(factsQuery, settings.connectTimeoutMs);
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

  /** Whether batched queries still run as prepared statements (not through a transaction pooler). */
  preparesStatements(): boolean {
    return this.prepareStatements;
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
    // The scrape's n-th connection; the collectors' second run after a re-plan reuses them.
    const leaseFor = (n: number): PooledLease => (leases[n] ??= pooledLease(this.pool));
    const first = leaseFor(0);
    try {
      const { facts, outcomes } = await this.collectWithFacts(scrapeStartMs, leaseFor);
      const families: RenderedFamily[] = [];
      for (let i = 0; i < this.runtimes.length; i++) {
        const runtime = this.runtimes[i];
        const outcome = outcomes[i];
        for (const warning of outcome.warnings) this.settings.logger.debug({ collector: runtime.collector.branch, datname: this.settings.datname }, warning);
        if (!outcome.ok) {
          if (runtime.collector.fatal) throw new Error(`fatal collector ${runtime.collector.branch} failed: ${outcome.error}`);
          if (!outcome.cached)
            this.settings.logger.warn({ collector: runtime.collector.branch, datname: this.settings.datname, err: outcome.error }, 'collector failed');
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
   * The server's facts and every installed collector's outcome. Once planned, the facts query
   * rides at the head of the first connection's batch instead of taking a round trip of its own
   * before the collectors: the plan changes only when the server does (a restart into another
   * version, a failover), and then the collectors run again under the new plan. Before the first
   * plan, for the pgbouncer console and with fatal collectors, the facts come first. A discovered
   * database whose collectors are all cached needs no facts at all; the main server always reads
   * them, since pg_up and the role come from them.
   */
  private async collectWithFacts(scrapeStartMs: number, leaseFor: LeaseFor): Promise<{ facts: ServerFacts; outcomes: CollectOutcome[] }> {
    const first = leaseFor(0);
    const known = this.planned ? this.lastFacts : undefined;
    if (known && this.settings.forked && this.runtimes.every((r) => r.isFresh(scrapeStartMs, this.settings.disableCache))) {
      return { facts: known, outcomes: complete(await this.runCollectors(scrapeStartMs, leaseFor)) };
    }
    if (known && !this.pgbouncer && !this.runtimes.some((r) => r.collector.fatal)) {
      const run = await this.runCollectors(scrapeStartMs, leaseFor, this.factsStatement);
      const facts = run.lead ? this.factsFrom(run.lead.rows[0] as string[]) : await this.precheck(first);
      if (this.applyFacts(facts)) return { facts, outcomes: complete(await this.runCollectors(scrapeStartMs, leaseFor)) };
      // Where a connection's batch failed, the server is now known to be there: what that
      // connection would have run runs again, one by one.
      const outcomes = run.outcomes;
      for (let i = 0; i < outcomes.length; i++) outcomes[i] ??= await this.runtimes[i].collect(first, scrapeStartMs, this.settings.disableCache);
      return { facts, outcomes: complete(run) };
    }
    const facts = await this.precheck(first);
    this.applyFacts(facts);
    return { facts, outcomes: complete(await this.runCollectors(scrapeStartMs, leaseFor)) };
  }

  /**
   * Every installed collector's outcome, in plan order (with a lead, undefined where a
   * connection's batch failed and that connection stopped). Cached ones answer at once; the rest
   * run on as many connections as the pool allows (two for the main server), batched where they
   * can be (batch.ts), so the round trips of one connection overlap the other's. The lead
   * statement goes first in the first connection's batch. Fatal collectors run first, alone:
   * when one fails, nothing else runs.
   */
  private async runCollectors(scrapeStartMs: number, leaseFor: LeaseFor, lead?: BatchStatement): Promise<CollectorsRun> {
    const first = leaseFor(0);
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
      if (!outcome.ok) return { outcomes: outcomes.map((o) => o ?? skippedOutcome) };
    }
    // Each connection sends its share of the batchable collectors as one batch, then takes the
    // others one at a time from a shared queue.
    const batchable = pending.filter((i) => this.runtimes[i].batchable());
    const single = pending.filter((i) => !this.runtimes[i].batchable());
    const lanes = Math.max(1, Math.min(this.settings.poolSize, Math.max(single.length, Math.ceil(batchable.length / 2))));
    let next = 0;
    let leadOutput: QueryOutput | undefined;
    const lane = async (n: number, lease: PooledLease): Promise<void> => {
      const mine = batchable.filter((_, k) => k % lanes === n);
      const batched = await collectBatch(
        mine.map((i) => this.runtimes[i]),
        lease,
        { scrapeStartMs, disableCache, prepare: this.prepareStatements, lead: n === 0 ? lead : undefined, deferFailure: lead !== undefined },
      );
      if (batched.preparedLost && this.prepareStatements) {
        this.prepareStatements = false;
        this.settings.logger.warn(
          { datname: this.settings.datname },
          'prepared statements do not follow the connection (a transaction pooler in between?): batches run as plain text from now on',
        );
      }
      if (n === 0) leadOutput = batched.lead;
      const own = batched.outcomes;
      // Failed while the facts are unread: whether the server is there at all is not known yet.
      if (own === undefined) return;
      mine.forEach((i, k) => (outcomes[i] = own[k]));
      while (next < single.length) {
        const i = single[next++];
        outcomes[i] = await this.runtimes[i].collect(lease, scrapeStartMs, disableCache);
      }
    };
    await Promise.all(Array.from({ length: lanes }, (_, n) => lane(n, leaseFor(n))));
    return { outcomes, lead: leadOutput };
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
    return this.factsFrom(output.rows[0] as string[]);
  }

  /** Facts from the facts query's row; an unchanged row reuses the last facts (no JSON parsing per scrape). */
  private factsFrom(row: string[]): ServerFacts {
    if (this.lastFacts && !this.lastFacts.pgbouncer && row.length === this.lastFactsRow.length && row.every((cell, i) => cell === this.lastFactsRow[i]))
      return this.lastFacts;
    this.lastFactsRow = row;
    return factsFromRow(row, { forked: this.settings.forked, serverTags: this.settings.serverTags });
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

  /** Re-plans when never planned or when the version, recovery state or database changed; true when it did. */
  private applyFacts(facts: ServerFacts): boolean {
    const previous = this.lastFacts;
    this.lastFacts = facts;
    this.version = facts.version;
    this.inRecovery = facts.inRecovery;
    if (this.planned && !needsReplan(previous, facts)) return false;
    const plan = planCollectors(this.collectors, facts);
    this.decisions = plan.decisions;
    this.runtimes = plan.installed.map((c) => new CollectorRuntime(c, this.settings.constantLabels, !this.pgbouncer));
    this.planned = true;
    this.settings.logger.info(
      { datname: this.settings.datname, version: facts.version, inRecovery: facts.inRecovery, installed: this.runtimes.length, total: this.collectors.length },
      'planned collectors',
    );
    return true;
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

/** A lease that connects on first use and is released (or discarded) by the scrape that made it. */
interface PooledLease extends ClientLease {
  release(): void;
}

/**
 * pg reports a connection that ends between two queries as an 'error' event on its client. The
 * pool listens only on idle clients, and an event nobody listens to ends the process; the next
 * query on the client fails instead, and the lease discards it.
 */
const ignoreLeasedClientError = (): void => undefined;

function pooledLease(pool: Pool): PooledLease {
  let current: PoolClient | undefined;
  const giveBack = (destroy: boolean): void => {
    current?.off('error', ignoreLeasedClientError);
    current?.release(destroy);
    current = undefined;
  };
  return {
    get: async () => {
      if (current) return current;
      const client = await pool.connect();
      client.on('error', ignoreLeasedClientError);
      current = client;
      return client;
    },
    discard: () => giveBack(true),
    release: () => giveBack(false),
  };
}

/** The scrape's n-th connection (0: the first, which also reads the facts). */
type LeaseFor = (n: number) => PooledLease;

/** The collectors' outcomes of one run, and the lead statement's answer when it had one. */
interface CollectorsRun {
  outcomes: Array<CollectOutcome | undefined>;
  lead?: QueryOutput;
}

/** A run's outcomes with none missing (a missing one can only follow a failed lead batch, run again by the caller). */
function complete(run: CollectorsRun): CollectOutcome[] {
  return run.outcomes.map((o) => o ?? skippedOutcome);
}

/** Stands in for collectors left out after a fatal collector failed; the scrape fails anyway. */
const skippedOutcome: CollectOutcome = { families: [], ok: true, cached: false, skipped: true, warnings: [] };
