import { isServerError, timedBatch, type BatchStatement, type QueryOutput } from './connection.js';
import { isSharedServerStatement } from './prepared.js';
import type { ClientLease, CollectOutcome, CollectorRuntime } from './runtime.js';
import { monotonicMs } from '../process/clock.js';

export interface BatchOptions {
  scrapeStartMs: number;
  disableCache: boolean;
  /** Run the statements as prepared statements where they name one (prepared.ts). */
  prepare: boolean;
  /** A statement sent ahead of the collectors' queries in the same round trip (the server's facts). */
  lead?: BatchStatement;
  /** Return no outcomes when the batch fails instead of running each collector alone (so with a lead). */
  deferFailure: boolean;
}

export interface BatchResult {
  /** In the runtimes' order; undefined when a batch that defers failures failed (none counted). */
  outcomes: CollectOutcome[] | undefined;
  /** The lead statement's answer; absent when there was none or the batch failed. */
  lead?: QueryOutput;
  /** The server's prepared statements do not follow this connection: something between pools the connections. */
  preparedLost?: boolean;
}

/**
 * Runs several collectors' queries in one round trip. An uncached scrape's time goes mostly on
 * round trips (waking PostgreSQL and being woken), not on the queries, so N collectors cost
 * about one round trip instead of N. Each query keeps its own statement_timeout, and with
 * `prepare` runs as a prepared statement (prepared.ts). When the batch
 * fails (one query's error ends it, and which one is not known), each collector runs again on
 * its own; the one that fails then has an error and stays out of batches until it succeeds.
 * Every collector is counted once, with the batch's time shared out as its duration.
 *
 * A batch that defers its failure (the caller's choice with a lead statement) is not retried collector by
 * collector and counts for none of them: the caller first learns whether the server is there and
 * lets it in (one that refuses or does not answer would otherwise cost a connection attempt or a
 * connect timeout per collector), then runs them again.
 */
export async function collectBatch(runtimes: CollectorRuntime[], lease: ClientLease, options: BatchOptions): Promise<BatchResult> {
  const { scrapeStartMs, disableCache, lead } = options;
  if (lead === undefined && runtimes.length < 2) return { outcomes: await Promise.all(runtimes.map((r) => r.collect(lease, scrapeStartMs, disableCache))) };
  const started = monotonicMs();
  const asSent = (s: BatchStatement): BatchStatement => (options.prepare ? s : { text: s.text, timeoutMs: s.timeoutMs });
  const statements = runtimes.map((r) => asSent(r.batchStatement));
  let outputs: QueryOutput[];
  try {
    outputs = await timedBatch(await lease.get(), lead ? [asSent(lead), ...statements] : statements);
  } catch (error) {
    // Prepared statements may have been made or lost on the way: a new connection starts clean.
    if (!isServerError(error) || options.prepare) lease.discard();
    const preparedLost = options.prepare && isSharedServerStatement(error);
    if (options.deferFailure) return { outcomes: undefined, preparedLost };
    const outcomes: CollectOutcome[] = [];
    for (const runtime of runtimes) outcomes.push(await runtime.collect(lease, scrapeStartMs, disableCache));
    return { outcomes, preparedLost };
  }
  const own = lead ? outputs.slice(1) : outputs;
  const share = (monotonicMs() - started) / 1000 / Math.max(1, runtimes.length);
  const outcomes = runtimes.map((runtime, i) => {
    runtime.begin(scrapeStartMs);
    runtime.stats.duration = share;
    try {
      return runtime.succeed(own[i]);
    } catch (error) {
      return runtime.fail(error);
    }
  });
  return lead ? { outcomes, lead: outputs[0] } : { outcomes };
}
