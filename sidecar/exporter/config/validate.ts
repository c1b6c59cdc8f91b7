import { validateColumns } from './columns.js';
import { isMap, isValidMetricName, type Raw } from './names.js';
import { defaultCollectorTimeout, type Collector, type PredicateQuery } from './types.js';

/** A configuration problem that names the file, the collector (branch) and the field. */
export class CollectorConfigError extends Error {
  constructor(
    readonly file: string,
    readonly branch: string | undefined,
    readonly field: string | undefined,
    detail: string,
  ) {
    const where = [file, branch !== undefined ? `collector "${branch}"` : undefined, field !== undefined ? `field "${field}"` : undefined]
      .filter((part) => part !== undefined)
      .join(': ');
    super(`${where}: ${detail}`);
    this.name = 'CollectorConfigError';
  }
}

const collectorKeys = new Set([
  'name',
  'desc',
  'query',
  'predicate_queries',
  'tags',
  'ttl',
  'timeout',
  'priority',
  'min_version',
  'max_version',
  'fatal',
  'skip',
  'metrics',
]);

export { isValidLabelName, isValidMetricName } from './names.js';

/** Reads one branch of YAML into a Collector, or throws a CollectorConfigError naming the field. */
export function validateCollector(file: string, branch: string, raw: unknown, warnings: string[]): Collector {
  const fail = (field: string | undefined, detail: string): never => {
    throw new CollectorConfigError(file, branch, field, detail);
  };
  if (!isMap(raw)) fail(undefined, 'must be a map of collector fields');
  const value = raw as Raw;
  for (const key of Object.keys(value)) {
    if (!collectorKeys.has(key)) warnings.push(`${file}: collector "${branch}": unknown field "${key}" ignored`);
  }

  const str = (field: string, fallback: string): string => {
    const v = value[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'string') return fail(field, `must be a string, got ${typeof v}`);
    return v;
  };
  const num = (field: string, fallback: number, check?: (n: number) => string | undefined): number => {
    const v = value[field];
    if (v === undefined || v === null) return fallback;
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n)) return fail(field, `must be a number, got ${JSON.stringify(v)}`);
    const problem = check?.(n);
    if (problem) fail(field, problem);
    return n;
  };
  const bool = (field: string): boolean => {
    const v = value[field];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') return fail(field, `must be true or false, got ${JSON.stringify(v)}`);
    return v;
  };

  const query = str('query', '');
  if (query.trim() === '') fail('query', 'is required and must not be empty');
  const name = str('name', branch);
  if (!isValidMetricName(name)) fail('name', `"${name}" is not a valid metric name prefix`);

  const tagsRaw = value.tags ?? [];
  if (!Array.isArray(tagsRaw) || tagsRaw.some((t) => typeof t !== 'string')) fail('tags', 'must be a list of strings');
  const ttl = num('ttl', 0, (n) => (n < 0 ? 'must not be negative' : undefined));
  const timeoutRaw = num('timeout', 0);
  const timeout = timeoutRaw === 0 ? defaultCollectorTimeout : timeoutRaw;
  const priority = num('priority', 0, (n) => (Number.isInteger(n) ? undefined : 'must be an integer'));
  const intCheck = (n: number): string | undefined => (Number.isInteger(n) && n >= 0 ? undefined : 'must be a non-negative integer (server_version_num)');
  const minVersion = num('min_version', 0, intCheck);
  const maxVersion = num('max_version', 0, intCheck);
  if (maxVersion !== 0 && maxVersion <= minVersion) fail('max_version', `${maxVersion} must be greater than min_version ${minVersion}`);

  const predicateQueries = validatePredicates(value.predicate_queries, (detail, index) =>
    fail(index === undefined ? 'predicate_queries' : `predicate_queries[${index}]`, detail),
  );
  const columns = validateColumns(
    value.metrics,
    name,
    (field, detail) => fail(field, detail),
    (detail) => warnings.push(`${file}: collector "${branch}": ${detail}`),
  );

  return {
    branch,
    name,
    desc: str('desc', ''),
    query,
    predicateQueries,
    tags: tagsRaw as string[],
    ttl,
    timeout,
    priority,
    minVersion,
    maxVersion,
    fatal: bool('fatal'),
    skip: bool('skip'),
    columns,
    source: file.split('/').pop() ?? file,
  };
}

function validatePredicates(raw: unknown, fail: (detail: string, index?: number) => never): PredicateQuery[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return fail('must be a list of {name, predicate_query, ttl}');
  return raw.map((entry, index) => {
    if (!isMap(entry)) return fail('must be a map with predicate_query', index);
    const query = entry.predicate_query;
    if (typeof query !== 'string' || query.trim() === '') return fail('predicate_query is required and must be a non-empty string', index);
    const ttl = entry.ttl ?? 0;
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 0) return fail('ttl must be a non-negative number', index);
    const name = typeof entry.name === 'string' ? entry.name : `predicate ${index + 1}`;
    return { name, query, ttl };
  });
}

/** Constant labels must not collide with collector labels, nor with the self-metric labels. */
export function checkConstantLabels(collectors: Collector[], constantLabels: Record<string, string>, selfMetrics: boolean): void {
  const names = Object.keys(constantLabels);
  if (names.length === 0) return;
  if (selfMetrics) {
    for (const reserved of ['datname', 'query']) {
      if (names.includes(reserved))
        throw new CollectorConfigError('--label', undefined, reserved, `constant label "${reserved}" collides with the exporter's own metrics`);
    }
  }
  for (const collector of collectors) {
    for (const column of collector.columns) {
      const label = column.rename ?? column.name;
      if (column.usage === 'LABEL' && names.includes(label)) {
        throw new CollectorConfigError(collector.source, collector.branch, column.name, `label "${label}" collides with constant label "${label}"`);
      }
    }
  }
}
