import type { Collector, Column } from '../config/types.js';
import { renderLabels, sampleLine, uniqueLines, type RenderedFamily } from '../text/exposition.js';

/** Result columns as node-postgres reports them (rowMode "array"). */
export interface ResultField {
  name: string;
  dataTypeID: number;
}

/** A raw cell: text for most types (we keep node-postgres from parsing), Date for timestamps. */
export type Cell = string | Date | null | undefined;

const boolOid = 16;

/** A metric value as pg_exporter derives it: bools 1/0, timestamps epoch seconds (unscaled), text parsed, NULL → default. */
export function metricValue(cell: Cell, typeOid: number, column: Column): number {
  const scale = column.scale ?? 1;
  if (cell === null || cell === undefined) return column.default === undefined ? NaN : column.default * scale;
  if (cell instanceof Date) return cell.getTime() / 1000;
  if (typeOid === boolOid) return (cell === 't' ? 1 : 0) * scale;
  if (cell.trim() === '') return NaN;
  const n = Number(cell);
  return Number.isNaN(n) ? parseLooseFloat(cell) * scale : n * scale;
}

/** Accepts the spellings Number() does not: "inf", "-Infinity" variants from other drivers. */
function parseLooseFloat(text: string): number {
  const lower = text.trim().toLowerCase();
  if (lower === 'inf' || lower === '+inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  return NaN;
}

export function labelValue(cell: Cell, typeOid: number): string {
  if (cell === null || cell === undefined) return '';
  if (cell instanceof Date) return String(cell.getTime() / 1000);
  if (typeOid === boolOid) return cell === 't' ? 'true' : cell === 'f' ? 'false' : cell;
  return cell;
}

export interface Transformed {
  families: RenderedFamily[];
  sampleCount: number;
  warnings: string[];
}

export class CollectorResultError extends Error {}

interface Bound {
  column: Column;
  index: number;
  typeOid: number;
  metric: string;
}

type HistogramGroup = { labels: Array<[string, string]>; counts: number[]; count: number; sum: number };

/** Counts one row's observation into its label set's buckets. */
function observe(h: Bound, groups: Map<string, HistogramGroup>, row: Cell[], rendered: string, pairs: Array<[string, string]>): void {
  const cell = row[h.index];
  if (cell === null || cell === undefined) return;
  const observed = metricValue(cell, h.typeOid, h.column);
  if (Number.isNaN(observed)) return;
  let group = groups.get(rendered);
  if (!group) {
    group = { labels: pairs, counts: new Array<number>(h.column.bucket?.length ?? 0).fill(0), count: 0, sum: 0 };
    groups.set(rendered, group);
  }
  const bounds = h.column.bucket ?? [];
  for (let b = 0; b < bounds.length; b++) if (observed <= bounds[b]) group.counts[b]++;
  group.count++;
  group.sum += observed;
}

/**
 * Turns one result set into rendered families. A LABEL or HISTOGRAM column missing from the result
 * fails the collector; a missing GAUGE/COUNTER is skipped with a warning, as pg_exporter does.
 */
export function transformRows(
  collector: Collector,
  fields: ResultField[],
  rows: Cell[][],
  constantLabels: ReadonlyArray<readonly [string, string]>,
): Transformed {
  const warnings: string[] = [];
  const indexOf = new Map<string, number>();
  fields.forEach((field, index) => {
    if (!indexOf.has(field.name)) indexOf.set(field.name, index);
  });
  const labels: Bound[] = [];
  const values: Bound[] = [];
  const histograms: Bound[] = [];
  for (const column of collector.columns) {
    if (column.usage === 'DISCARD') continue;
    const index = indexOf.get(column.name);
    const suffix = column.rename ?? column.name;
    const bound = (i: number): Bound => ({ column, index: i, typeOid: fields[i].dataTypeID, metric: `${collector.name}_${suffix}` });
    if (index === undefined) {
      if (column.usage === 'GAUGE' || column.usage === 'COUNTER') {
        warnings.push(`column "${column.name}" missing from the result; metric skipped`);
        continue;
      }
      throw new CollectorResultError(`${column.usage} column "${column.name}" missing from the result`);
    }
    if (column.usage === 'LABEL') labels.push(bound(index));
    else if (column.usage === 'HISTOGRAM') histograms.push(bound(index));
    else values.push(bound(index));
  }
  if (fields.length !== collector.columns.length)
    warnings.push(`column count not match: result has ${fields.length}, config defines ${collector.columns.length}`);

  const families: RenderedFamily[] = values.map((v) => ({
    name: v.metric,
    help: v.column.description,
    type: v.column.usage === 'COUNTER' ? 'counter' : 'gauge',
    lines: [],
  }));
  const histogramGroups = histograms.map(() => new Map<string, HistogramGroup>());

  // Series repeat only when two rows have the same labels; knowing that per row saves the
  // per-line de-duplication for the usual result.
  const labelSets = new Set<string>();
  // Plain loops, no closures per row: a scrape transforms thousands of rows, and the exporter runs
  // in V8's interpreter (ADR 0107), where every call and allocation is paid in full.
  const labelNames = labels.map((l) => l.column.rename ?? l.column.name);
  for (const row of rows) {
    const pairs: Array<[string, string]> = [];
    for (let l = 0; l < labels.length; l++) pairs.push([labelNames[l], labelValue(row[labels[l].index], labels[l].typeOid)]);
    for (const c of constantLabels) pairs.push([c[0], c[1]]);
    const rendered = renderLabels(pairs);
    labelSets.add(rendered);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      families[i].lines.push(sampleLine(v.metric, rendered, metricValue(row[v.index], v.typeOid, v.column)));
    }
    for (let i = 0; i < histograms.length; i++) observe(histograms[i], histogramGroups[i], row, rendered, pairs);
  }

  histograms.forEach((h, i) => {
    const bucket: RenderedFamily = { name: `${h.metric}_bucket`, help: h.column.description, type: 'gauge', lines: [] };
    const count: RenderedFamily = { name: `${h.metric}_count`, help: h.column.description, type: 'gauge', lines: [] };
    const sum: RenderedFamily = { name: `${h.metric}_sum`, help: h.column.description, type: 'gauge', lines: [] };
    const bounds = h.column.bucket ?? [];
    for (const [rendered, group] of histogramGroups[i]) {
      bounds.forEach((bound, b) => {
        bucket.lines.push(sampleLine(bucket.name, renderLabels([...group.labels, ['le', String(bound)]]), group.counts[b]));
      });
      bucket.lines.push(sampleLine(bucket.name, renderLabels([...group.labels, ['le', '+Inf']]), group.count));
      count.lines.push(sampleLine(count.name, rendered, group.count));
      sum.lines.push(sampleLine(sum.name, rendered, group.sum));
    }
    families.push(bucket, count, sum);
  });
  // Rows with the same labels would repeat a series; keep the first, once, when the result is made.
  if (labelSets.size < rows.length) for (const family of families) family.lines = uniqueLines(family.lines);
  const sampleCount = families.reduce((n, family) => n + family.lines.length, 0);
  return { families, sampleCount, warnings };
}
