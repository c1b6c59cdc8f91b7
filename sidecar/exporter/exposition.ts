/**
 * Prometheus text exposition format 0.0.4: escaping, number formatting and the merge of
 * pre-rendered sample lines into contiguous families (Prometheus rejects a family split in two).
 */
export type FamilyType = 'gauge' | 'counter' | 'untyped';

export interface RenderedFamily {
  name: string;
  help: string;
  type: FamilyType;
  /** Complete sample lines without the trailing newline: `name{labels} value`. */
  lines: string[];
}

export const textContentType = 'text/plain; version=0.0.4; charset=utf-8';

const needsEscape = /[\\\n"]/;

export function escapeLabelValue(value: string): string {
  // Most label values need no escaping; testing first avoids three string copies per value.
  if (!needsEscape.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

export function escapeHelp(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** `{a="x",b="y"}` from ordered pairs, or "" when there are none. */
export function renderLabels(pairs: ReadonlyArray<readonly [string, string]>): string {
  if (pairs.length === 0) return '';
  let out = '{';
  for (let i = 0; i < pairs.length; i++) {
    if (i > 0) out += ',';
    out += `${pairs[i][0]}="${escapeLabelValue(pairs[i][1])}"`;
  }
  return `${out}}`;
}

export function sampleLine(name: string, labels: string, value: number): string {
  return `${name}${labels} ${formatValue(value)}`;
}

/**
 * Joins families into one text body. Families with the same name are merged (first HELP/TYPE
 * wins) and a series already emitted is dropped, so the output never repeats a series.
 */
export function renderExposition(families: Iterable<RenderedFamily>): string {
  const merged = new Map<string, { help: string; type: FamilyType; chunks: string[][] }>();
  for (const family of families) {
    if (family.lines.length === 0) continue;
    const existing = merged.get(family.name);
    if (existing) existing.chunks.push(family.lines);
    else merged.set(family.name, { help: family.help, type: family.type, chunks: [family.lines] });
  }
  const parts: string[] = [];
  const seen = new Set<string>();
  for (const [name, family] of merged) {
    // HELP is optional; an empty one is left out because some parsers reject "# HELP name ".
    if (family.help !== '') parts.push(`# HELP ${name} ${escapeHelp(family.help)}`);
    parts.push(`# TYPE ${name} ${family.type}`);
    for (const lines of family.chunks) {
      for (const line of lines) {
        const key = line.slice(0, line.lastIndexOf(' '));
        if (seen.has(key)) continue;
        seen.add(key);
        parts.push(line);
      }
    }
  }
  return parts.length === 0 ? '' : `${parts.join('\n')}\n`;
}
