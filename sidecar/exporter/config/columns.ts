import { isMap, isValidLabelName, isValidMetricName, type Raw } from './names.js';
import type { Column, ColumnUsage } from './types.js';

/** Validation of a collector's `metrics:` list (column definitions), pg_exporter's rules. */
const usages = new Set<ColumnUsage>(['DISCARD', 'LABEL', 'GAUGE', 'COUNTER', 'HISTOGRAM']);
const columnKeys = new Set(['usage', 'rename', 'description', 'scale', 'default', 'bucket', 'name']);

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isNaN(n) ? undefined : n;
  }
  return undefined;
}

export function validateColumns(raw: unknown, namespace: string, fail: (field: string, detail: string) => never, warn: (detail: string) => void): Column[] {
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
    if (!usage || !usages.has(usage))
      return fail(`${field}.usage`, `must be one of DISCARD, LABEL, GAUGE, COUNTER, HISTOGRAM, got ${JSON.stringify(usageRaw)}`);
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
