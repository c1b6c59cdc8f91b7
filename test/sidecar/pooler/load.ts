import type pg from 'pg';

/**
 * Application load through a pooler for the switchover tests: one client querying every 20 ms
 * (its longest wait is the client's stall) and busy writers keeping 30 ms transactions in flight,
 * as a loaded application does. Every acknowledged insert id and every error is recorded. A failed
 * client waits 20 ms and connects again (as an application would), so a broken connection costs a
 * recorded failure, never a loop that starves the test's own timers.
 */
export interface LoadResult {
  acknowledged: number[];
  /** When each acknowledgement arrived (epoch ms), in the order of `acknowledged`. */
  acknowledgedAt: number[];
  failures: string[];
  longestStallMs: number;
}

export interface RunningLoad {
  /** What the load saw so far (the live record: it grows until stop). */
  readonly result: LoadResult;
  stop(): Promise<LoadResult>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startLoad(connect: () => Promise<pg.Client>, busyWriters = 4): Promise<RunningLoad> {
  const result: LoadResult = { acknowledged: [], acknowledgedAt: [], failures: [], longestStallMs: 0 };
  let running = true;
  const worker = async (label: string, statement: string, idOf: (reply: unknown) => number, gapMs: number) => {
    let client: pg.Client | undefined;
    while (running) {
      const startedAt = performance.now();
      try {
        client ??= await connect();
        result.acknowledged.push(idOf(await client.query(statement)));
        result.acknowledgedAt.push(Date.now());
      } catch (error) {
        result.failures.push(`${label}: ${(error as Error).message}`);
        await client?.end().catch(() => undefined);
        client = undefined;
        await pause(20);
      }
      if (label === 'client') result.longestStallMs = Math.max(result.longestStallMs, performance.now() - startedAt);
      if (gapMs) await pause(gapMs);
    }
    await client?.end().catch(() => undefined);
  };
  const single = (reply: unknown) => Number((reply as pg.QueryResult<{ id: string }>).rows[0]!.id);
  const inTransaction = (reply: unknown) => Number((reply as pg.QueryResult<{ id: string }>[])[1]!.rows[0]!.id);
  const workers = [
    worker('client', 'INSERT INTO ticks DEFAULT VALUES RETURNING id', single, 20),
    ...Array.from({ length: busyWriters }, () =>
      worker('busy', 'BEGIN; INSERT INTO ticks DEFAULT VALUES RETURNING id; SELECT pg_sleep(0.03); COMMIT', inTransaction, 0),
    ),
  ];
  let stopped: Promise<LoadResult> | undefined;
  return {
    result,
    stop() {
      running = false;
      return (stopped ??= Promise.all(workers).then(() => result));
    },
  };
}

/** Runs `work` under load; the load stops whether the work succeeds or throws. */
export async function underLoad<T>(connect: () => Promise<pg.Client>, work: () => Promise<T>): Promise<{ value: T; load: LoadResult }> {
  const load = await startLoad(connect);
  try {
    const value = await work();
    return { value, load: await load.stop() };
  } finally {
    await load.stop();
  }
}
