import { yaml } from '../../../lib/yaml.js';
import type { Collector } from '../config/types.js';
import type { CollectorRuntime } from './runtime.js';

/** A duration in seconds the way Go prints time.Duration for these values (100ms, 1s, 2.5s). */
export function formatDuration(seconds: number): string {
  if (seconds < 0) return 'none';
  if (seconds < 1) return `${Math.round(seconds * 1e6) / 1e3}ms`;
  return `${seconds}s`;
}

function versionRange(c: Collector): string {
  return `${c.minVersion === 0 ? 'lower' : c.minVersion} ~ ${c.maxVersion === 0 ? 'higher' : c.maxVersion}`;
}

/** The collector written back in pg_exporter's YAML shape (every column with its name). */
export function collectorYaml(c: Collector): string {
  const body: Record<string, unknown> = {
    name: c.name,
    desc: c.desc,
    query: c.query,
    ...(c.predicateQueries.length ? { predicate_queries: c.predicateQueries.map((p) => ({ name: p.name, predicate_query: p.query, ttl: p.ttl })) } : {}),
    ttl: c.ttl,
    timeout: c.timeout,
    priority: c.priority,
    tags: c.tags,
    min_version: c.minVersion,
    max_version: c.maxVersion,
    fatal: c.fatal,
    skip: c.skip,
    metrics: c.columns.map((col) => ({
      [col.name]: {
        name: col.name,
        usage: col.usage,
        ...(col.rename ? { rename: col.rename } : {}),
        ...(col.scale !== undefined ? { scale: col.scale } : {}),
        ...(col.default !== undefined ? { default: col.default } : {}),
        ...(col.bucket ? { bucket: col.bucket } : {}),
        description: col.description,
      },
    })),
  };
  return yaml().stringify({ [c.branch]: body }, { lineWidth: 0 });
}

/** One /explain block: synopsis, description, options, metrics, then the YAML. */
export function explainCollector(c: Collector): string {
  const synopsis = c.name === c.branch ? `${c.name}_*` : `${c.name}.${c.branch}_*`;
  const lines = [
    '##',
    '# SYNOPSIS',
    `#       ${synopsis}`,
    '#',
    '# DESCRIPTION',
    `#       ${c.desc || 'N/A'}`,
    '#',
    '# OPTIONS',
    `#       Tags       [${c.tags.join(', ')}]`,
    `#       TTL        ${c.ttl}`,
    `#       Priority   ${c.priority}`,
    `#       Timeout    ${formatDuration(c.timeout)}`,
    `#       Fatal      ${c.fatal}`,
    `#       Version    ${versionRange(c)}`,
    `#       Source     ${c.source}`,
    '#',
    '# METRICS',
  ];
  for (const col of c.columns) {
    lines.push(`#       ${col.name} (${col.usage})`);
    lines.push(`#           ${col.description || 'N/A'}`);
    if (col.bucket) lines.push(`#           Bucket [${col.bucket.join(', ')}]`);
  }
  lines.push('#');
  return `${lines.join('\n')}\n${collectorYaml(c)}`;
}

export function explainText(collectors: Collector[]): string {
  return collectors.map(explainCollector).join('\n');
}

const pad = (text: string, width: number): string => (text.length >= width ? text : text + ' '.repeat(width - text.length));

/** The /stat table: one row per installed collector of the main server. */
export function statText(runtimes: CollectorRuntime[]): string {
  const header = pad('name', 24) + ['total', 'hit', 'error', 'skip', 'metric', 'ttl/s', 'duration/ms'].map((h) => pad(h, 10)).join('');
  const rows = runtimes.map((r) => {
    const s = r.stats;
    const cells = [s.total, s.hit, s.error, s.skip, s.metric, Math.trunc(r.remainingTtl())].map((n) => pad(String(n), 10));
    cells.push(pad((s.duration * 1000).toFixed(6), 10));
    return pad(r.collector.branch, 24) + cells.join('');
  });
  return `${[header, ...rows].join('\n')}\n`;
}
