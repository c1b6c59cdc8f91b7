/**
 * CRD `x-kubernetes-validations` rules, evaluated with @marcbachmann/cel-js. Rules are compiled
 * when the CRD is written (a rule that does not compile rejects the CRD, as on a real server) and
 * evaluated against custom resources at every schema node that declares them. `oldSelf` rules
 * are transition rules: they run on updates only, where the old value exists.
 */
import { Environment } from '@marcbachmann/cel-js';
import { invalidValue, type FieldError } from '../errors.js';
import { isJsonObject, type JsonObject } from '../types.js';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  optionalOldSelf?: boolean;
}

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}

const environment = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false });

type Compiled = (context: Record<string, unknown>) => unknown;
const cache = new Map<string, Compiled>();

function compile(expression: string): Compiled {
  let compiled = cache.get(expression);
  if (!compiled) {
    compiled = environment.parse(expression) as unknown as Compiled;
    cache.set(expression, compiled);
  }
  return compiled;
}

/** Transition rules mention oldSelf (outside string literals). */
function usesOldSelf(expression: string): boolean {
  return /\boldSelf\b/.test(expression.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""'));
}

/** Checks rules at CRD write time: each must be an object with a compiling `rule`. */
export function checkRules(rules: unknown, _schema: unknown, path: string): FieldError[] {
  if (!Array.isArray(rules)) return [invalidValue(path, rules, 'must be a list of validation rules')];
  const errors: FieldError[] = [];
  rules.forEach((r, i) => {
    if (!isJsonObject(r) || typeof r.rule !== 'string' || r.rule.trim() === '') {
      errors.push({ type: 'FieldValueRequired', field: `${path}[${i}].rule`, message: 'Required value' });
      return;
    }
    for (const [field, expression] of [
      ['rule', r.rule],
      ['messageExpression', r.messageExpression],
    ] as const) {
      if (typeof expression !== 'string') continue;
      try {
        compile(expression);
      } catch (err) {
        errors.push(invalidValue(`${path}[${i}].${field}`, expression, `compilation failed: ${(err as Error).message.split('\n')[0]}`));
      }
    }
  });
  return errors;
}

/** JSON values as CEL sees them: schema integers become int (bigint), the rest stays. */
function toCel(value: unknown, schema: SchemaNode | undefined): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'number') {
    const integral = schema?.type === 'integer' || (schema?.['x-kubernetes-int-or-string'] && Number.isInteger(value));
    return integral ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => toCel(v, schema?.items));
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const child = schema?.properties?.[k] ?? (isJsonObject(schema?.additionalProperties) ? (schema?.additionalProperties as SchemaNode) : undefined);
      out[k] = toCel(v, child);
    }
    return out;
  }
  return value;
}

function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (isJsonObject(value)) return 'object';
  return typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
}

/** Where a failed rule is reported: its node, or `fieldPath` below it ("spec.x", not ".spec.x", at the root). */
function fieldOf(path: string, fieldPath: string | undefined): string {
  if (!fieldPath) return path || '<nil>';
  return path ? `${path}${fieldPath}` : fieldPath.replace(/^\./, '');
}

function evaluateNode(value: unknown, old: unknown, schema: SchemaNode, path: string, errors: FieldError[]): void {
  const rules = schema['x-kubernetes-validations'] ?? [];
  for (const rule of rules) {
    let compiled: Compiled;
    try {
      compiled = compile(rule.rule);
    } catch (err) {
      errors.push(invalidValue(path || '<nil>', rule.rule, `compilation failed: ${(err as Error).message.split('\n')[0]}`));
      continue;
    }
    const transition = usesOldSelf(rule.rule);
    if (transition && old === undefined && !rule.optionalOldSelf) continue;
    const context: Record<string, unknown> = { self: toCel(value, schema) };
    if (transition) context.oldSelf = toCel(old, schema);
    const field = fieldOf(path, rule.fieldPath);
    let ok: unknown;
    try {
      ok = compiled(context);
    } catch (err) {
      errors.push(invalidValue(field, describeType(value), `evaluation error: ${(err as Error).message.split('\n')[0]}`));
      continue;
    }
    if (ok === true) continue;
    let message = rule.message ?? `failed rule: ${rule.rule}`;
    if (rule.messageExpression) {
      try {
        const text = compile(rule.messageExpression)(context);
        if (typeof text === 'string' && text.trim() !== '') message = text;
      } catch {
        // the static message (or the rule) is used when messageExpression fails
      }
    }
    const reason = rule.reason ?? 'FieldValueInvalid';
    if (reason === 'FieldValueInvalid') errors.push({ type: reason, field, message: `Invalid value: "${describeType(value)}": ${message}` });
    else errors.push({ type: reason, field, message });
  }
  if (isJsonObject(value)) {
    const oldObject = isJsonObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value)) {
      const child = schema.properties?.[k] ?? (isJsonObject(schema.additionalProperties) ? (schema.additionalProperties as SchemaNode) : undefined);
      if (child) evaluateNode(v, oldObject?.[k], child, path ? `${path}.${k}` : k, errors);
    }
  } else if (Array.isArray(value) && schema.items) {
    const keys = schema['x-kubernetes-list-type'] === 'map' ? (schema['x-kubernetes-list-map-keys'] ?? []) : undefined;
    value.forEach((item, i) => {
      // Old list items correlate only in map-type lists (by their keys), as on a real server.
      const oldItem = keys && Array.isArray(old) ? old.find((o) => isJsonObject(o) && isJsonObject(item) && keys.every((k) => o[k] === item[k])) : undefined;
      evaluateNode(item, oldItem, schema.items as SchemaNode, `${path}[${i}]`, errors);
    });
  }
}

/** Evaluates every rule in the schema against the object (and the old object for transition rules). */
export function evaluateRules(o: unknown, old: unknown, schema: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!isJsonObject(schema)) return errors;
  const root = schema as SchemaNode;
  // Rules see the object without metadata's server-set fields, like a real server's `self`.
  evaluateNode(o, old, root, path, errors);
  return errors;
}
