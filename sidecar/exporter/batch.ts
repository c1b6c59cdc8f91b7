import { isServerError, timedBatch } from './connection.js';
import type { ClientLease, CollectOutcome, CollectorRuntime } from './runtime.js';
import { monotonicMs } from './clock.js';

/**
 * Runs several collectors' queries in one round trip. An uncached scrape's time goes mostly on
 * round trips (waking PostgreSQL and being woken), not on the queries, so N collectors cost
 * about one round trip instead of N. Each query keeps its own statement_timeout. When the batch
 * fails (one query's error ends it, and which one is not known), each collector runs again on
 * its own; the one that fails then has an error and stays out of batches until it succeeds.
 * Every collector is counted once, with the batch's time shared out as its duration.
 */
export async function collectBatch(runtimes: CollectorRuntime[], lease: ClientLease, scrapeStartMs: number, disableCache: boolean): Promise<CollectOutcome[]> {
  if (runtimes.length < 2) return Promise.all(runtimes.map((r) => r.collect(lease, scrapeStartMs, disableCache)));
  const started = monotonicMs();
  let outputs;
  try {
    outputs = await timedBatch(
      await lease.get(),
      runtimes.map((r) => ({ text: r.collector.query, timeoutMs: r.collector.timeout * 1000 })),
    );
  } catch (error) {
    if (!isServerError(error)) lease.discard();
    const outcomes: CollectOutcome[] = [];
    for (const runtime of runtimes) outcomes.push(await runtime.collect(lease, scrapeStartMs, disableCache));
    return outcomes;
  }
  const share = (monotonicMs() - started) / 1000 / runtimes.length;
  return runtimes.map((runtime, i) => {
    runtime.begin(scrapeStartMs);
    runtime.stats.duration = share;
    try {
      return runtime.succeed(outputs[i]);
    } catch (error) {
      return runtime.fail(error);
    }
  });
}
