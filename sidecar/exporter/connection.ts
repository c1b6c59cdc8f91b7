import { pg, type CustomTypesConfig, type Pool, type PoolClient, type QueryResult } from '../../lib/pg.js';

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

/** Adds sslmode=disable when the URL names no sslmode, like pg_exporter. */
export function normalizeUrl(url: string): string {
  const parsed = parseUrl(url);
  if (!parsed.searchParams.has('sslmode')) parsed.searchParams.set('sslmode', 'disable');
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

export function createPool(settings: PoolSettings): Pool {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.max,
    connectionTimeoutMillis: Math.max(settings.connectTimeoutMs, 1),
    idleTimeoutMillis: 60_000,
    maxLifetimeSeconds: 60,
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

/**
 * Runs several statements in one round trip (one simple-query message), each under its own
 * statement_timeout, and returns every statement's answer in order. The server runs them as one
 * implicit transaction: the first error ends the batch and nothing is returned.
 */
export async function timedBatch(client: PoolClient, statements: Array<{ text: string; timeoutMs: number }>): Promise<QueryOutput[]> {
  const timeouts = statements.map((s) => (s.timeoutMs > 0 ? Math.max(1, Math.round(s.timeoutMs)) : 0));
  const sql = statements.map((s, i) => `SET statement_timeout = ${timeouts[i]};\n${s.text}\n;`).join('\n');
  const backstopMs = timeouts.includes(0) ? 0 : timeouts.reduce((a, b) => a + b, 0) + backstopGraceMs;
  const results = await boundedRun(client, sql, backstopMs);
  if (results.length !== statements.length * 2) throw new Error(`a batch of ${statements.length} statements returned ${results.length} results`);
  return statements.map((_, i) => results[i * 2 + 1]);
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
    return (Array.isArray(result) ? result : [result]).map((r) => ({ fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })), rows: (r.rows ?? []) as unknown[][] }));
  } catch (error) {
    if (error instanceof QueryTimeoutError) run.catch(() => undefined);
    throw error;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
