import { pg, type CustomTypesConfig, type Pool, type PoolClient, type QueryResult } from '../../../lib/pg.js';
import { preparedStatements, type BatchStatement } from './prepared.js';
import { poolTarget } from './server-tls.js';

/**
 * How the exporter talks to PostgreSQL: URL handling as pg_exporter does it, pools whose values
 * stay as text (we convert like the Go driver, not like node-postgres), and queries bounded by a
 * server-side statement_timeout plus a client-side backstop.
 */
const timestampOids = new Set([1082, 1114, 1184]);
const keepText = (value: string): string => value;

/** Raw text for every type except dates and timestamps, which become Date (epoch seconds later). */
export const exporterTypes = {
  getTypeParser(oid: number, format?: string) {
    if (timestampOids.has(oid)) return pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
    return keepText;
  },
} as unknown as CustomTypesConfig;

/** Adds sslmode=disable when the URL names no sslmode, like pg_exporter; TLS parameters that cannot work are refused here (server-tls.ts). */
export function normalizeUrl(url: string): string {
  const parsed = parseUrl(url);
  if (!parsed.searchParams.has('sslmode')) parsed.searchParams.set('sslmode', 'disable');
  poolTarget(parsed.toString());
  return parsed.toString();
}

function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('invalid PostgreSQL URL: expected postgres://user:password@host:port/database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`invalid PostgreSQL URL: scheme must be postgres:// or postgresql://, got ${parsed.protocol}//`);
  }
  return parsed;
}

/** The database the URL names (path or dbname parameter); "" when it names none. */
export function databaseOf(url: string): string {
  const parsed = parseUrl(url);
  const fromParam = parsed.searchParams.get('dbname');
  if (fromParam) return fromParam;
  return decodeURIComponent(parsed.pathname.replace(/^\//, ''));
}

/** The same URL pointed at another database (used for auto-discovered databases). */
export function urlForDatabase(url: string, database: string): string {
  const parsed = parseUrl(url);
  if (parsed.searchParams.has('dbname')) parsed.searchParams.set('dbname', database);
  else parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** The URL with the password replaced, safe for logs. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = 'xxxxx';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', 'xxxxx');
    return parsed.toString();
  } catch {
    return '(unparsable url)';
  }
}

export interface PoolSettings {
  url: string;
  max: number;
  connectTimeoutMs: number;
  applicationName: string;
}

/**
 * A connection outlives several scrapes at the usual 15–60 s intervals, so that the statements
 * it has prepared (prepared.ts) are reused; it is still replaced every ten minutes, which returns
 * whatever memory its backend has gathered.
 */
const poolIdleTimeoutMs = 5 * 60_000;
const poolMaxLifetimeSeconds = 10 * 60;

export function createPool(settings: PoolSettings): Pool {
  const target = poolTarget(settings.url);
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    ...(target.ssl ? { ssl: target.ssl } : {}),
    max: settings.max,
    connectionTimeoutMillis: Math.max(settings.connectTimeoutMs, 1),
    idleTimeoutMillis: poolIdleTimeoutMs,
    maxLifetimeSeconds: poolMaxLifetimeSeconds,
    application_name: settings.applicationName,
    types: exporterTypes,
    keepAlive: true,
  });
  // A dropped idle connection must not crash the process; the next query reports the problem.
  pool.on('error', () => undefined);
  return pool;
}

export interface QueryOutput {
  fields: Array<{ name: string; dataTypeID: number }>;
  rows: unknown[][];
}

export class QueryTimeoutError extends Error {
  readonly code = '57014';
}

/** True for errors PostgreSQL reported (SQLSTATE); anything else may have broken the connection. */
export function isServerError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return !(error instanceof QueryTimeoutError) && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** Extra time the client waits beyond the server-side timeout before giving up on the connection. */
const backstopGraceMs = 1_000;

/**
 * Runs one statement with a server-side statement_timeout in the same round trip. If the server
 * does not answer within timeout + grace (network gone), the connection is destroyed.
 * timeoutMs <= 0 means no timeout.
 */
export async function timedQuery(client: PoolClient, text: string, timeoutMs: number, useStatementTimeout = true): Promise<QueryOutput> {
  const bounded = timeoutMs > 0;
  const ms = bounded ? Math.max(1, Math.round(timeoutMs)) : 0;
  const sql = useStatementTimeout ? `SET statement_timeout = ${ms};\n${text}` : text;
  const results = await boundedRun(client, sql, bounded ? ms + (useStatementTimeout ? backstopGraceMs : 0) : 0);
  return results[results.length - 1];
}

export type { BatchStatement } from './prepared.js';

/**
 * Runs several statements in one round trip (one simple-query message), each under its own
 * statement_timeout, and returns every statement's answer in order. The server runs them as one
 * implicit transaction: the first error ends the batch and nothing is returned. A statement with
 * `prepareAs` is prepared in the same message the first time this connection sees it, then only
 * executed. After a failed batch, what the connection has prepared is not known: callers discard
 * the connection.
 */
export async function timedBatch(client: PoolClient, statements: BatchStatement[]): Promise<QueryOutput[]> {
  const prepared = preparedStatements(client);
  const preparing: string[] = [];
  const parts: string[] = [];
  const answerAt: number[] = [];
  let results = 0;
  let unbounded = false;
  let backstopMs = backstopGraceMs;
  for (const statement of statements) {
    const ms = statement.timeoutMs > 0 ? Math.max(1, Math.round(statement.timeoutMs)) : 0;
    unbounded ||= ms === 0;
    backstopMs += ms;
    let text = statement.text;
    const name = statement.prepareAs;
    if (name !== undefined) {
      if (!prepared.has(name) && !preparing.includes(name)) {
        parts.push(`PREPARE ${name} AS ${text}\n;`);
        preparing.push(name);
        results++;
      }
      text = `EXECUTE ${name}`;
    }
    parts.push(`SET statement_timeout = ${ms};\n${text}\n;`);
    results += 2;
    answerAt.push(results - 1);
  }
  const answers = await boundedRun(client, parts.join('\n'), unbounded ? 0 : backstopMs);
  if (answers.length !== results) throw new Error(`a batch of ${statements.length} statements returned ${answers.length} results`);
  for (const name of preparing) prepared.add(name);
  return answerAt.map((i) => answers[i]);
}

/** Runs a query text and returns each statement's answer; no answer within backstopMs (> 0) rejects. */
async function boundedRun(client: PoolClient, sql: string, backstopMs: number): Promise<QueryOutput[]> {
  const run = client.query({ text: sql, rowMode: 'array' }) as unknown as Promise<QueryResult | QueryResult[]>;
  let timer: NodeJS.Timeout | undefined;
  const backstop =
    backstopMs > 0
      ? new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new QueryTimeoutError(`no answer within ${backstopMs} ms`)), backstopMs);
        })
      : undefined;
  try {
    const result = backstop ? await Promise.race([run, backstop]) : await run;
    return (Array.isArray(result) ? result : [result]).map((r) => ({
      fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
      rows: (r.rows ?? []) as unknown[][],
    }));
  } catch (error) {
    if (error instanceof QueryTimeoutError) run.catch(() => undefined);
    throw error;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
