/** Label and field selectors in the query-string syntax kubectl and client-node send. */
import { badRequest } from './errors.js';

type LabelRequirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | '!' };

export type LabelSelector = (labels: Record<string, string> | undefined) => boolean;

const labelKeyPattern = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t.length > 0);
}

function checkKey(key: string, selector: string): string {
  if (!labelKeyPattern.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
  return key;
}

const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkValues(values: string[], selector: string): string[] {
  for (const v of values) {
    if (v.length > 63 || !labelValuePattern.test(v)) {
      throw badRequest(`unable to parse requirement: values[0][${selector}]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
    }
  }
  return values;
}

function parseLabelTerm(term: string, selector: string): LabelRequirement {
  let m = /^!\s*(\S+)$/.exec(term);
  if (m) return { key: checkKey(m[1], selector), op: '!' };
  m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (m) {
    const values = m[3].split(',').map((v) => v.trim()).filter((v, i, all) => v.length > 0 || all.length === 1);
    return { key: checkKey(m[1], selector), op: m[2] as 'in' | 'notin', values: checkValues(values, selector) };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (m) return { key: checkKey(m[1], selector), op: m[2] === '!=' ? 'notin' : 'in', values: checkValues([m[3]], selector) };
  m = /^([^=!\s()]+)$/.exec(term);
  if (m) return { key: checkKey(m[1], selector), op: 'exists' };
  throw badRequest(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`);
}

export function parseLabelSelector(selector: string | undefined): LabelSelector {
  if (!selector || selector.trim() === '') return () => true;
  const requirements = splitTerms(selector).map((t) => parseLabelTerm(t, selector));
  return (labels) =>
    requirements.every((r) => {
      const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
      switch (r.op) {
        case 'exists':
          return has;
        case '!':
          return !has;
        case 'in':
          return has && r.values.includes(labels[r.key]);
        case 'notin':
          return !has || !r.values.includes(labels[r.key]);
      }
    });
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

/** Parses `a=b,c!=d`; the caller checks which fields its resource supports. */
export function parseFieldSelector(selector: string | undefined): FieldRequirement[] {
  if (!selector || selector.trim() === '') return [];
  return splitTerms(selector).map((term) => {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    return { field: m[1].trim(), negate: m[2] === '!=', value: m[3].trim() };
  });
}
