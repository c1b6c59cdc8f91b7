/**
 * The label selector grammar of apimachinery's labels.Parse, token for token, so the stand-in
 * refuses exactly what a real server refuses (an empty term after a comma, a bad key or value, a
 * missing operator) with the same message. A selector the stand-in read more leniently than the
 * real server would select more: for a DELETE of a collection, everything in scope.
 */
import { badRequest } from '../errors.js';
import { labelValueErrors, qualifiedNameErrors } from '../writes/validation.js';

export type LabelOperator = 'exists' | '!' | '=' | '==' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOperator;
  values: string[];
}

type Token = 'end' | 'identifier' | 'in' | 'notin' | '!' | '=' | '==' | '!=' | '(' | ')' | ',' | '>' | '<';

interface Scanned {
  token: Token;
  literal: string;
}

const symbols: Record<string, Token> = { '!': '!', '=': '=', '==': '==', '!=': '!=', '(': '(', ')': ')', ',': ',', '>': '>', '<': '<' };
const isSymbol = (ch: string): boolean => '=!(),><'.includes(ch);
const isSpace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';

/** The lexer: a NUL ends the input (as in Go's byte reader), symbols are read greedily. */
function scan(text: string): Scanned[] {
  const end = text.indexOf('\0');
  const s = end === -1 ? text : text.slice(0, end);
  const items: Scanned[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isSpace(s[pos])) pos += 1;
    if (pos >= s.length) {
      items.push({ token: 'end', literal: '' });
      return items;
    }
    if (isSymbol(s[pos])) {
      const two = s.slice(pos, pos + 2);
      const literal = symbols[two] ? two : s[pos];
      items.push({ token: symbols[literal], literal });
      pos += literal.length;
      continue;
    }
    let word = '';
    while (pos < s.length && !isSymbol(s[pos]) && !isSpace(s[pos])) word += s[pos++];
    items.push({ token: word === 'in' || word === 'notin' ? word : 'identifier', literal: word });
  }
}

const binaryOperators = 'in, notin, =, ==, !=, gt, lt';

/** A syntax error inside the parser; parseLabelRequirements turns it into the 400. */
class SelectorSyntaxError extends Error {}

function parseError(message: string): never {
  throw new SelectorSyntaxError(message);
}

class Parser {
  private position = 0;
  constructor(private readonly items: Scanned[]) {}

  /** In value position the keywords `in` and `notin` are plain identifiers. */
  private peek(asValue = true): Scanned {
    const item = this.items[this.position];
    return asValue && (item.token === 'in' || item.token === 'notin') ? { token: 'identifier', literal: item.literal } : item;
  }

  private next(asValue = true): Scanned {
    const item = this.peek(asValue);
    this.position += 1;
    return item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const ahead = this.peek();
      if (ahead.token === 'end') return requirements;
      if (ahead.token !== 'identifier' && ahead.token !== '!') parseError(`found '${ahead.literal}', expected: !, identifier, or 'end of string'`);
      requirements.push(this.requirement());
      const after = this.next();
      if (after.token === 'end') return requirements;
      if (after.token !== ',') parseError(`found '${after.literal}', expected: ',' or 'end of string'`);
      const following = this.peek();
      if (following.token !== 'identifier' && following.token !== '!') parseError(`found '${following.literal}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    try {
      let op: LabelOperator | undefined;
      let item = this.next();
      if (item.token === '!') {
        op = '!';
        item = this.next();
      }
      if (item.token !== 'identifier') parseError(`found '${item.literal}', expected: identifier`);
      const key = checkKey(item.literal);
      const ahead = this.peek();
      if (op === '!' || ahead.token === 'end' || ahead.token === ',') return { key, op: op ?? 'exists', values: [] };
      const operator = this.operator();
      const values = operator === 'in' || operator === 'notin' ? this.valueSet() : [this.exactValue()];
      return checkedRequirement(key, operator, values);
    } catch (err) {
      if (err instanceof SelectorSyntaxError) parseError(`unable to parse requirement: ${err.message}`);
      throw err;
    }
  }

  private operator(): LabelOperator {
    const item = this.next(false);
    switch (item.token) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return item.token;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        return parseError(`found '${item.literal}', expected: ${binaryOperators}`);
    }
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.token !== '(') parseError(`found '${open.literal}' expected: '('`);
    const ahead = this.peek();
    if (ahead.token === ')') {
      this.next();
      return [''];
    }
    if (ahead.token !== 'identifier' && ahead.token !== ',') parseError(`found '${ahead.literal}', expected: ',', ')' or identifier`);
    const values = this.identifierList();
    const close = this.next();
    if (close.token !== ')') parseError(`found '${ahead.literal}', expected: ')'`);
    return values;
  }

  private identifierList(): string[] {
    const values = new Set<string>();
    for (;;) {
      const item = this.next();
      if (item.token === 'identifier') {
        values.add(item.literal);
        const ahead = this.peek();
        if (ahead.token === ')') return [...values];
        if (ahead.token !== ',') parseError(`found '${ahead.literal}', expected: ',' or ')'`);
      } else if (item.token === ',') {
        // "(," ",)" and ",," each stand for an empty value.
        if (values.size === 0) values.add('');
        const ahead = this.peek();
        if (ahead.token === ')') {
          values.add('');
          return [...values];
        }
        if (ahead.token === ',') {
          this.next();
          values.add('');
        }
      } else {
        parseError(`found '${item.literal}', expected: ',', or identifier`);
      }
    }
  }

  private exactValue(): string {
    const ahead = this.peek();
    if (ahead.token === 'end' || ahead.token === ',') return '';
    const item = this.next();
    if (item.token !== 'identifier') parseError(`found '${item.literal}', expected: identifier`);
    return item.literal;
  }
}

function checkKey(key: string): string {
  const errors = qualifiedNameErrors(key);
  if (errors.length > 0) parseError(`invalid label key ${JSON.stringify(key)}: ${errors.join('; ')}`);
  return key;
}

/** Go's strconv.ParseInt(v, 10, 64), or undefined where it fails. */
export function parseInt64(v: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(v)) return undefined;
  const n = BigInt(v);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** labels.NewRequirement's checks on the values. */
function checkedRequirement(key: string, op: LabelOperator, values: string[]): LabelRequirement {
  if ((op === 'gt' || op === 'lt') && parseInt64(values[0]) === undefined) parseError("for 'Gt', 'Lt' operators, the value must be an integer");
  for (const value of values) {
    const errors = labelValueErrors(value);
    if (errors.length > 0) parseError(`invalid label value: ${JSON.stringify(value)}: at key: ${JSON.stringify(key)}: ${errors.join('; ')}`);
  }
  return { key, op, values };
}

/** Parses a label selector in the query-string syntax; a malformed one is a 400 with the real server's message. */
export function parseLabelRequirements(selector: string): LabelRequirement[] {
  try {
    return new Parser(scan(selector)).parse();
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw badRequest(err.message);
    throw err;
  }
}
