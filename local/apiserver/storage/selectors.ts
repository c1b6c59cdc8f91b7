/** Label and field selectors in the query-string syntax kubectl and client-node send. */
import { badRequest } from '../errors.js';
import { parseInt64, parseLabelRequirements, type LabelRequirement } from './label-selector-parser.js';

export type LabelSelector = (labels: Record<string, string> | undefined) => boolean;

/** Requirement.Matches of apimachinery's labels package. */
function matchesRequirement(r: LabelRequirement, labels: Record<string, string> | undefined): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.op) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
    case '==':
    case 'in':
      return value !== undefined && r.values.includes(value);
    case '!=':
    case 'notin':
      return value === undefined || !r.values.includes(value);
    case 'gt':
    case 'lt': {
      const actual = value === undefined ? undefined : parseInt64(value);
      const bound = parseInt64(r.values[0]);
      if (actual === undefined || bound === undefined) return false;
      return r.op === 'gt' ? actual > bound : actual < bound;
    }
  }
}

export function parseLabelSelector(selector: string | undefined): LabelSelector {
  const requirements = parseLabelRequirements(selector ?? '');
  return (labels) => requirements.every((r) => matchesRequirement(r, labels));
}

/** A `matchLabels`/`matchExpressions` label selector object (as in Deployment.spec.selector). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/** Renders a selector object as the query string form (used by the scale subresource). */
export function formatLabelSelector(selector: LabelSelectorObject | undefined): string {
  if (!selector) return '';
  const terms: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) terms.push(`${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    if (e.operator === 'Exists') terms.push(e.key);
    else if (e.operator === 'DoesNotExist') terms.push(`!${e.key}`);
    else terms.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
  }
  return terms.join(',');
}

export interface FieldRequirement {
  field: string;
  negate: boolean;
  value: string;
}

/** Splits on commas that no backslash escapes (fields.splitTerms). */
function splitFieldTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i += 1) {
    if (escaped) escaped = false;
    else if (selector[i] === '\\') escaped = true;
    else if (selector[i] === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** fields.UnescapeValue: `\\`, `\,` and `\=` are escapes; a bare `,` or `=` is refused. */
function unescapeFieldValue(value: string): string {
  let out = '';
  let escaped = false;
  for (const ch of value) {
    if (escaped) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') throw badRequest(`invalid field selector: invalid escape sequence: \\${ch}`);
      out += ch;
      escaped = false;
    } else if (ch === '\\') escaped = true;
    // Go prints the rune as its number.
    else if (ch === ',' || ch === '=') throw badRequest(`invalid field selector: unescaped character in value: ${ch.charCodeAt(0)}`);
    else out += ch;
  }
  if (escaped) throw badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

const fieldOperators = ['!=', '==', '='] as const;

/**
 * Parses `a=b,c!=d` as fields.ParseSelector does: empty terms are skipped (a real server accepts
 * `a=b,` and `,`), nothing is trimmed, and the first operator found splits the term. The caller
 * checks which fields its resource supports.
 */
export function parseFieldSelector(selector: string | undefined): FieldRequirement[] {
  if (!selector) return [];
  const requirements: FieldRequirement[] = [];
  for (const term of splitFieldTerms(selector).sort()) {
    if (term === '') continue;
    let split: { at: number; op: string } | undefined;
    for (let i = 0; i < term.length && !split; i += 1) {
      const op = fieldOperators.find((o) => term.startsWith(o, i));
      if (op) split = { at: i, op };
    }
    if (!split) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const value = unescapeFieldValue(term.slice(split.at + split.op.length));
    requirements.push({ field: term.slice(0, split.at), negate: split.op === '!=', value });
  }
  return requirements;
}
