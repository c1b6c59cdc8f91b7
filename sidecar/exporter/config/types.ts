/**
 * The collector model: one YAML branch of a pg_exporter configuration after validation.
 * Field names follow the YAML so that /explain and error messages speak the user's words.
 */
export type ColumnUsage = 'DISCARD' | 'LABEL' | 'GAUGE' | 'COUNTER' | 'HISTOGRAM';

export interface Column {
  /** Column name in the query result. */
  name: string;
  usage: ColumnUsage;
  /** Name used in the metric or label instead of the column name. */
  rename?: string;
  description: string;
  /** Multiplier for metric values (not applied to timestamps). */
  scale?: number;
  /** Value used when the SQL value is NULL; without it NULL becomes NaN. */
  default?: number;
  /** HISTOGRAM upper bounds, finite and strictly increasing (+Inf is implied). */
  bucket?: number[];
}

export interface PredicateQuery {
  name: string;
  query: string;
  /** Seconds to cache the predicate's answer; 0 means evaluate on every real execution. */
  ttl: number;
}

export interface Collector {
  /** The YAML map key; unique across the whole configuration. */
  branch: string;
  /** Metric namespace (prefix), defaults to the branch. */
  name: string;
  desc: string;
  query: string;
  predicateQueries: PredicateQuery[];
  tags: string[];
  /** Cache lifetime in seconds; 0 disables caching. */
  ttl: number;
  /** Query deadline in seconds; negative means none. */
  timeout: number;
  priority: number;
  /** Inclusive lower bound on server_version_num; 0 means none. */
  minVersion: number;
  /** Exclusive upper bound on server_version_num; 0 means none. */
  maxVersion: number;
  fatal: boolean;
  skip: boolean;
  columns: Column[];
  /** Base name of the file the branch came from (shown by /explain). */
  source: string;
}

export interface CollectorSet {
  collectors: Collector[];
  /** What was loaded: a file, a directory or the built-in set. */
  origin: string;
  /** Non-fatal findings, e.g. unknown keys that pg_exporter would also ignore. */
  warnings: string[];
}

/** The timeout pg_exporter applies when a collector sets none (seconds). */
export const defaultCollectorTimeout = 0.1;
