import { defaultCollectorTimeout, type Collector, type Column, type ColumnUsage, type PredicateQuery } from './types.js';

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

const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const usages = new Set<ColumnUsage>(['DISCARD', 'LABEL', 'GAUGE', 'COUNTER', 'HISTOGRAM']);
const collectorKeys = new Set(['name', 'desc', 'query', 'predicate_queries', 'tags', 'ttl', 'timeout', 'priority', 'min_version', 'max_version', 'fatal', 'skip', 'metrics']);
const columnKeys = new Set(['usage', 'rename', 'description', 'scale', 'default', 'bucket', 'name']);

export const isValidMetricName = (name: string): boolean => metricNamePattern.test(name);
export const isValidLabelName = (name: string): boolean => labelNamePattern.test(name) && !name.startsWith('__');

type Raw = Record<string, unknown>;

function isMap(value: unknown): value is Raw {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

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

  const predicateQueries = validatePredicates(value.predicate_queries, (detail, index) => fail(index === undefined ? 'predicate_queries' : `predicate_queries[${index}]`, detail));
  const columns = validateColumns(value.metrics, name, (field, detail) => fail(field, detail), (detail) => warnings.push(`${file}: collector "${branch}": ${detail}`));

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

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isNaN(n) ? undefined : n;
  }
  return undefined;
}

function validateColumns(raw: unknown, namespace: string, fail: (field: string, detail: string) => never, warn: (detail: string) => void): Column[] {
  if (!Array.isArray(raw) || raw.length === 0) return fail('metrics', 'is required and must be a non-empty list of one-key maps');
  const columns: Column[] = [];
  const seenColumns = new Set<string>();
  const seenLabels = new Set<string>();
  const derivedNames = new Map<string, string>();
  let hasValue = false;
  let hasHistogram = false;
  raw.forEach((entry, index) => {
    if (!isMap(entry) || Object.keys(entry).length !== 1) fail(`metrics[${index}]`, 'each entry must be a map with exactly one key (the column name)');
    const [key, defRaw] = Object.entries(entry as Raw)[0];
    const field = `metrics[${index}].${key}`;
    if (!isMap(defRaw)) return fail(field, 'column definition must be a map with at least "usage"');
    for (const k of Object.keys(defRaw)) if (!columnKeys.has(k)) warn(`column "${key}": unknown field "${k}" ignored`);
    const usageRaw = defRaw.usage;
    const usage = typeof usageRaw === 'string' ? (usageRaw.trim().toUpperCase() as ColumnUsage) : undefined;
    if (!usage || !usages.has(usage)) return fail(`${field}.usage`, `must be one of DISCARD, LABEL, GAUGE, COUNTER, HISTOGRAM, got ${JSON.stringify(usageRaw)}`);
    const name = typeof defRaw.name === 'string' && defRaw.name !== '' ? defRaw.name : key;
    if (seenColumns.has(name)) fail(field, `duplicate column "${name}"`);
    seenColumns.add(name);
    const rename = defRaw.rename === undefined || defRaw.rename === null ? undefined : String(defRaw.rename);
    const effective = rename && rename !== '' ? rename : name;
    const column: Column = { name, usage, description: typeof defRaw.description === 'string' ? defRaw.description : '', ...(rename ? { rename } : {}) };
    if (defRaw.scale !== undefined && defRaw.scale !== null && defRaw.scale !== '') {
      const scale = toNumber(defRaw.scale);
      if (scale === undefined || !Number.isFinite(scale)) fail(`${field}.scale`, `must be a number, got ${JSON.stringify(defRaw.scale)}`);
      column.scale = scale;
    }
    if (defRaw.default !== undefined && defRaw.default !== null && defRaw.default !== '') {
      const def = toNumber(defRaw.default);
      if (def === undefined) fail(`${field}.default`, `must be a number, got ${JSON.stringify(defRaw.default)}`);
      column.default = def;
    }
    if (defRaw.bucket !== undefined && defRaw.bucket !== null) {
      if (usage !== 'HISTOGRAM') fail(`${field}.bucket`, 'is only allowed on HISTOGRAM columns');
      const bucket = defRaw.bucket;
      if (!Array.isArray(bucket) || bucket.length === 0) return fail(`${field}.bucket`, 'must be a non-empty list of numbers');
      const bounds = bucket.map(toNumber);
      bounds.forEach((b, i) => {
        if (b === undefined || !Number.isFinite(b)) fail(`${field}.bucket`, `bound ${i + 1} must be a finite number`);
        if (i > 0 && (b as number) <= (bounds[i - 1] as number)) fail(`${field}.bucket`, 'bounds must be strictly increasing');
      });
      column.bucket = bounds as number[];
    }
    if (usage === 'HISTOGRAM' && !column.bucket) fail(`${field}.bucket`, 'is required for HISTOGRAM columns');
    if (usage === 'LABEL') {
      if (!isValidLabelName(effective)) fail(field, `"${effective}" is not a valid label name`);
      if (seenLabels.has(effective)) fail(field, `duplicate label "${effective}"`);
      seenLabels.add(effective);
    } else if (usage !== 'DISCARD') {
      hasValue = true;
      const metric = `${namespace}_${effective}`;
      if (!isValidMetricName(metric)) fail(field, `"${metric}" is not a valid metric name`);
      const names = usage === 'HISTOGRAM' ? [`${metric}_bucket`, `${metric}_count`, `${metric}_sum`] : [metric];
      if (usage === 'HISTOGRAM') hasHistogram = true;
      for (const derived of names) {
        const owner = derivedNames.get(derived);
        if (owner) fail(field, `metric name "${derived}" collides with the one from column "${owner}"`);
        derivedNames.set(derived, key);
      }
    }
    columns.push(column);
  });
  if (!hasValue) fail('metrics', 'needs at least one GAUGE, COUNTER or HISTOGRAM column');
  if (hasHistogram && seenLabels.has('le')) fail('metrics', 'a label named "le" is not allowed in a collector with a HISTOGRAM column');
  return columns;
}

/** Constant labels must not collide with collector labels, nor with the self-metric labels. */
export function checkConstantLabels(collectors: Collector[], constantLabels: Record<string, string>, selfMetrics: boolean): void {
  const names = Object.keys(constantLabels);
  if (names.length === 0) return;
  if (selfMetrics) {
    for (const reserved of ['datname', 'query']) {
      if (names.includes(reserved)) throw new CollectorConfigError('--label', undefined, reserved, `constant label "${reserved}" collides with the exporter's own metrics`);
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
