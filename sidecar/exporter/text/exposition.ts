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
  /** Set when the lines themselves may repeat a series (otherwise producers guarantee uniqueness). */
  mayRepeat?: boolean;
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

/** Joined text of a cached result's lines, computed once per lines array (cached scrapes reuse them). */
const joinedLines = new WeakMap<string[], string>();

function joined(lines: string[]): string {
  // A single sample needs no join and no WeakMap entry.
  if (lines.length === 1) return lines[0];
  let text = joinedLines.get(lines);
  if (text === undefined) {
    text = lines.join('\n');
    joinedLines.set(lines, text);
  }
  return text;
}

/** The series part of a sample line (everything before the value). */
const seriesOf = (line: string): string => line.slice(0, line.lastIndexOf(' '));

/**
 * Keeps the first occurrence of each series. Producers call it once when a result is made, so a
 * cached scrape does not pay for it again.
 */
export function uniqueLines(lines: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const line of lines) {
    const key = seriesOf(line);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(line);
  }
  return out.length === lines.length ? lines : out;
}

/**
 * Joins families into one text body. Families with the same name are merged (first HELP/TYPE
 * wins) and a series already emitted is dropped, so the output never repeats a series.
 */
export function renderExposition(families: Iterable<RenderedFamily>): string {
  const merged = new Map<string, { help: string; type: FamilyType; chunks: string[][]; mayRepeat: boolean }>();
  for (const family of families) {
    if (family.lines.length === 0) continue;
    const existing = merged.get(family.name);
    if (existing) {
      existing.chunks.push(family.lines);
      existing.mayRepeat = true;
    } else {
      merged.set(family.name, { help: family.help, type: family.type, chunks: [family.lines], mayRepeat: family.mayRepeat === true });
    }
  }
  const parts: string[] = [];
  for (const [name, family] of merged) {
    parts.push(familyHead(name, family.type, family.help));
    parts.push(family.mayRepeat ? uniqueLines(family.chunks.flat()).join('\n') : joined(family.chunks[0]));
    parts.push('\n');
  }
  return parts.join('');
}

/** HELP and TYPE lines of a family, each ending in a newline. */
export function familyHead(name: string, type: FamilyType, help: string): string {
  // HELP is optional; an empty one is left out because some parsers reject "# HELP name ".
  return `${help === '' ? '' : `# HELP ${name} ${escapeHelp(help)}\n`}# TYPE ${name} ${type}\n`;
}

const unescapeHelp = (value: string): string => value.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));

/**
 * Families back from text this module rendered (one block per family). Used only when a
 * collector's family must merge with one rendered as text for the scrape.
 */
export function familiesOfText(text: string): RenderedFamily[] {
  const out: RenderedFamily[] = [];
  let help = '';
  let current: RenderedFamily | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('# HELP ')) {
      const rest = line.slice('# HELP '.length);
      help = unescapeHelp(rest.slice(rest.indexOf(' ') + 1));
    } else if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice('# TYPE '.length).split(' ');
      current = { name, type: type as FamilyType, help, lines: [] };
      out.push(current);
      help = '';
    } else if (line !== '' && current) {
      current.lines.push(line);
    }
  }
  return out;
}
