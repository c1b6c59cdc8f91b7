import type { ServerFacts } from './planner.js';

/**
 * What a scrape learns about its server before the collectors' results count: version, recovery
 * state, database, role and the names the planner's tags test. Read by the query below, or from
 * the pgbouncer console's SHOW VERSION.
 */
export const factsQuery = `SELECT current_setting('server_version_num')::int AS version,
  current_catalog, current_user, pg_catalog.pg_is_in_recovery(),
  (SELECT coalesce(json_agg(datname ORDER BY datname), '[]') FROM pg_catalog.pg_database WHERE datallowconn AND NOT datistemplate)::text,
  (SELECT coalesce(json_agg(nspname), '[]') FROM pg_catalog.pg_namespace)::text,
  (SELECT coalesce(json_agg(extname), '[]') FROM pg_catalog.pg_extension)::text`;

/** What the facts of one server carry besides the query's answer. */
export interface FactsContext {
  forked: boolean;
  serverTags: string[];
}

/** The facts in one row of `factsQuery` (every cell as text). */
export function factsFromRow(row: readonly string[], context: FactsContext): ServerFacts {
  return {
    version: Number(row[0]),
    datname: row[1],
    username: row[2],
    inRecovery: row[3] === 't',
    databases: JSON.parse(row[4]) as string[],
    schemas: JSON.parse(row[5]) as string[],
    extensions: JSON.parse(row[6]) as string[],
    forked: context.forked,
    pgbouncer: false,
    serverTags: context.serverTags,
  };
}

/**
 * Whether the collectors must be planned again: the version, the recovery state or the database
 * changed (a restart into another version, a failover or switchover). Other facts change which
 * databases are discovered, not which collectors run.
 */
export function needsReplan(previous: ServerFacts | undefined, next: ServerFacts): boolean {
  return !previous || previous.version !== next.version || previous.inRecovery !== next.inRecovery || previous.datname !== next.datname;
}

/** "PgBouncer 1.18.0" → 11800 (major·10000 + minor·100 + patch); 0 when unknown (older versions answer with a NOTICE). */
export function pgbouncerVersion(text: string): number {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return match ? Number(match[1]) * 10000 + Number(match[2]) * 100 + Number(match[3] ?? 0) : 0;
}
