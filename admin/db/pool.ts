import { createHash } from 'node:crypto';
import pg from 'pg';
import { createPipeline } from './pipeline.js';

export type Db = pg.Pool;
export type DbClient = pg.PoolClient;
/** Either the pool or a client inside a transaction: both can run queries. */
export type Queryable = Pick<pg.Pool, 'query'>;

// Named statements (prepared()) carry LIMIT/OFFSET as parameters; PostgreSQL's cost model then
// keeps re-planning them on every execution (custom plans), which costs more than running them.
// The admin tables are small and evenly shaped, so one generic plan per statement is right (ADR 0205).
// Sent as a startup option, so it costs no round trip; options in DATABASE_URL take precedence.
// TimeZone=UTC: timestamptz text then arrives as UTC, which reads turn into records without a Date
// (db/timestamps.ts, ADR 0206); no admin SQL depends on the session zone.
const sessionOptions = '-c plan_cache_mode=force_generic_plan -c TimeZone=UTC';

export interface PoolOptions {
  /** Pooled connections: transactions, and single statements when there is no pipeline (default 10). */
  max?: number;
  /** Pipelined connections for single statements outside transactions (default 2; 0: none). */
  pipelineConnections?: number;
}

/**
 * A pg pool whose `query` (single statements) goes over a few pipelined connections (ADR 0207);
 * `connect` (transactions, migrations) hands out pooled connections as usual.
 */
export function createPool(databaseUrl: string, { max = 10, pipelineConnections = 2 }: PoolOptions = {}): Db {
  const options = [process.env.PGOPTIONS, sessionOptions].filter(Boolean).join(' ');
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000, options });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  if (pipelineConnections > 0) {
    const pipeline = createPipeline({ connectionString: databaseUrl, options, connectionTimeoutMillis: 5_000 }, pipelineConnections);
    const endPool = pool.end.bind(pool);
    pool.query = pipeline.query;
    pool.end = (async () => {
      await pipeline.end();
      await endPool();
    }) as typeof pool.end;
  }
  return pool;
}

/** Runs fn in one transaction; rolls back on any error. */
export async function withTransaction<T>(db: Db, fn: (client: DbClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const statementNames = new Map<string, string>();

/**
 * A named (prepared) query: PostgreSQL parses and plans it once per connection. For hot paths whose
 * SQL text comes from a small set of shapes; the name is derived from the text.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `k_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (statementNames.size < 5000) statementNames.set(text, name);
  }
  return { name, text, values };
}
