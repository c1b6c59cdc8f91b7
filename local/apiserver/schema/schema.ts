/**
 * Structural OpenAPI v3 schemas of CRDs: the structural check on CRD writes, and for custom
 * resources pruning of unknown fields, defaulting, and validation with field paths (422).
 */
import { badRequest, invalid, invalidValue, required, type FieldError } from '../errors.js';
import { checkRules, evaluateRules, type ValidationRule } from './cel.js';
import { clone, isJsonObject, type JsonObject, type KubeObject } from '../types.js';

export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: ValidationRule[];
  [key: string]: unknown;
}

const knownTypes = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** The structural-schema rules a real server enforces on CRD writes (the common subset). */
export function checkStructural(schema: Schema, path: string, root = true): FieldError[] {
  const errors: FieldError[] = [];
  if (!isJsonObject(schema)) return [invalidValue(path, schema, 'must be an object')];
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (schema.type === undefined && !intOrString && !preserve) errors.push(required(`${path}.type`, 'must not be empty for specified object fields'));
  if (schema.type !== undefined && !knownTypes.has(schema.type)) {
    errors.push({
      type: 'FieldValueNotSupported',
      field: `${path}.type`,
      message: `Unsupported value: ${JSON.stringify(schema.type)}: supported values: "array", "boolean", "integer", "number", "object", "string"`,
    });
  }
  if (root && schema.type !== 'object') errors.push(invalidValue(`${path}.type`, schema.type ?? '', 'must be object at the root'));
  if (schema.properties && schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    errors.push({
      type: 'FieldValueForbidden',
      field: `${path}.additionalProperties`,
      message: 'Forbidden: additionalProperties and properties are mutual exclusive',
    });
  }
  if (schema.type === 'array' && !schema.items) errors.push(required(`${path}.items`, 'must be specified'));
  for (const [name, child] of Object.entries(schema.properties ?? {})) errors.push(...checkStructural(child, `${path}.properties[${name}]`, false));
  if (isJsonObject(schema.additionalProperties)) errors.push(...checkStructural(schema.additionalProperties as Schema, `${path}.additionalProperties`, false));
  if (schema.items) {
    if (Array.isArray(schema.items)) errors.push(invalidValue(`${path}.items`, 'array', 'items must be a schema object and not an array'));
    else errors.push(...checkStructural(schema.items, `${path}.items`, false));
  }
  if (root && schema.properties?.metadata) {
    const meta = schema.properties.metadata;
    const extra = Object.keys(meta.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName');
    if (extra.length > 0)
      errors.push({
        type: 'FieldValueForbidden',
        field: `${path}.properties[metadata]`,
        message: 'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
      });
  }
  const rules = schema['x-kubernetes-validations'];
  if (rules !== undefined) errors.push(...checkRules(rules, schema, `${path}.x-kubernetes-validations`));
  return errors;
}

function goTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Removes fields the schema does not declare; collects their paths (for fieldValidation=Strict). */
export function prune(value: unknown, schema: Schema | undefined, path: string, unknown: string[], root = false): unknown {
  if (!schema || (schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties)) return value;
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      if (root && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) {
        out[k] = v;
        continue;
      }
      const child = schema.properties?.[k] ?? (isJsonObject(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined);
      if (child) out[k] = prune(v, child, path ? `${path}.${k}` : k, unknown);
      else if (schema.additionalProperties === true || schema['x-kubernetes-preserve-unknown-fields'] === true) out[k] = v;
      else unknown.push(path ? `${path}.${k}` : k);
    }
    return out;
  }
  if (Array.isArray(value) && schema.items) return value.map((v, i) => prune(v, schema.items, `${path}[${i}]`, unknown));
  return value;
}

/** Fills `default`s of absent properties, recursively (also inside defaulted objects). */
export function applyDefaults(value: unknown, schema: Schema | undefined): unknown {
  if (!schema) return value;
  if (isJsonObject(value)) {
    for (const [k, child] of Object.entries(schema.properties ?? {})) {
      if (value[k] === undefined && child.default !== undefined) value[k] = clone(child.default);
      if (value[k] !== undefined) value[k] = applyDefaults(value[k], child);
    }
    if (isJsonObject(schema.additionalProperties))
      for (const k of Object.keys(value)) value[k] = applyDefaults(value[k], schema.additionalProperties as Schema);
  } else if (Array.isArray(value) && schema.items) {
    return value.map((v) => applyDefaults(v, schema.items));
  }
  return value;
}

function typeMatches(value: unknown, schema: Schema): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isJsonObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
  }
}

/** Schema validation with Kubernetes' messages ("spec.x in body must be of type integer"). */
export function validateValue(value: unknown, schema: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const field = path || '<root>';
  if (value === null) {
    if (schema.nullable) return [];
    return [invalidValue(field, 'null', `${field} in body must be of type ${schema.type ?? 'object'}: "null"`)];
  }
  if (!typeMatches(value, schema)) {
    const expected = schema['x-kubernetes-int-or-string'] ? 'integer or string' : schema.type;
    return [
      {
        type: 'FieldValueTypeInvalid',
        field,
        message: `Invalid value: "${goTypeName(value)}": ${field} in body must be of type ${expected}: "${goTypeName(value)}"`,
      },
    ];
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push({
      type: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
      errors.push(invalidValue(field, value, `${field} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`));
    }
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
      errors.push(invalidValue(field, value, `${field} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`));
    }
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && [...value].length < schema.minLength)
      errors.push(invalidValue(field, value, `${field} in body should be at least ${schema.minLength} chars long`));
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength)
      errors.push({ type: 'FieldValueTooLong', field, message: `Too long: may not be more than ${schema.maxLength} bytes` });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      errors.push(invalidValue(field, value, `${field} in body should match '${schema.pattern}'`));
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      errors.push(invalidValue(field, value.length, `${field} in body should have at least ${schema.minItems} items`));
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errors.push({ type: 'FieldValueTooLong', field, message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
    const listType = schema['x-kubernetes-list-type'];
    if (listType === 'set' || schema.uniqueItems) {
      const seen = new Set<string>();
      value.forEach((v, i) => {
        const k = JSON.stringify(v);
        if (seen.has(k)) errors.push({ type: 'FieldValueDuplicate', field: `${field}[${i}]`, message: `Duplicate value: ${k}` });
        seen.add(k);
      });
    }
    if (listType === 'map') {
      const keys = schema['x-kubernetes-list-map-keys'] ?? [];
      const seen = new Set<string>();
      value.forEach((v, i) => {
        const k = JSON.stringify(keys.map((key) => (isJsonObject(v) ? v[key] : undefined)));
        if (seen.has(k)) errors.push({ type: 'FieldValueDuplicate', field: `${field}[${i}]`, message: `Duplicate value: ${k}` });
        seen.add(k);
      });
    }
    if (schema.items) value.forEach((v, i) => errors.push(...validateValue(v, schema.items as Schema, `${field}[${i}]`)));
  }
  if (isJsonObject(value)) {
    for (const name of schema.required ?? []) if (value[name] === undefined) errors.push(required(path ? `${path}.${name}` : name));
    const count = Object.keys(value).length;
    if (schema.minProperties !== undefined && count < schema.minProperties)
      errors.push(invalidValue(field, count, `${field} in body should have at least ${schema.minProperties} properties`));
    if (schema.maxProperties !== undefined && count > schema.maxProperties)
      errors.push(invalidValue(field, count, `${field} in body should have at most ${schema.maxProperties} properties`));
    for (const [k, v] of Object.entries(value)) {
      const child = schema.properties?.[k] ?? (isJsonObject(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined);
      if (child && !(path === '' && (k === 'metadata' || k === 'apiVersion' || k === 'kind')))
        errors.push(...validateValue(v, child, path ? `${path}.${k}` : k));
    }
  }
  for (const sub of schema.allOf ?? []) errors.push(...validateValue(value, { ...sub, type: sub.type ?? schema.type }, path));
  if (schema.anyOf && !schema.anyOf.some((s) => validateValue(value, { ...s, type: s.type ?? schema.type }, path).length === 0)) {
    errors.push(invalidValue(field, value, `${field} in body must match at least one schema in anyOf`));
  }
  if (schema.oneOf && schema.oneOf.filter((s) => validateValue(value, { ...s, type: s.type ?? schema.type }, path).length === 0).length !== 1) {
    errors.push(invalidValue(field, value, `${field} in body must match exactly one schema in oneOf`));
  }
  if (schema.not && validateValue(value, { ...schema.not, type: schema.not.type ?? schema.type }, path).length === 0) {
    errors.push(invalidValue(field, value, `${field} in body should not match the schema in not`));
  }
  return errors;
}

/** A CRD schema may restrict metadata.name and generateName only (checkStructural); a real server validates them like any field. */
function validateMetadataName(o: KubeObject, schema: Schema): FieldError[] {
  const declared = schema.properties?.metadata?.properties ?? {};
  const errors: FieldError[] = [];
  for (const key of ['name', 'generateName'] as const) {
    const value = o.metadata[key];
    if (declared[key] && value !== undefined) errors.push(...validateValue(value, declared[key], `metadata.${key}`));
  }
  return errors;
}

/**
 * Decode-time processing of a custom resource: prune, default, validate (schema and CEL rules).
 * Unknown field paths are handed to the caller (400 under fieldValidation=Strict).
 */
export function admitCustomResource(o: KubeObject, schema: Schema, _statusSubresource: boolean, old?: KubeObject): void {
  const unknown: string[] = [];
  const pruned = prune(o, schema, '', unknown, true) as KubeObject;
  for (const k of Object.keys(o)) if (!(k in pruned)) delete o[k];
  Object.assign(o, pruned);
  applyDefaults(o, schema);
  const errors = validateValue(
    { ...o, metadata: undefined, apiVersion: undefined, kind: undefined },
    {
      ...schema,
      properties: {
        ...(schema.properties ?? {}),
        metadata: undefined as unknown as Schema,
        apiVersion: undefined as unknown as Schema,
        kind: undefined as unknown as Schema,
      },
    },
    '',
  );
  errors.push(...validateMetadataName(o, schema));
  // As on a real server, type errors block CEL evaluation (rules would see values of the wrong type).
  if (!errors.some((e) => e.type === 'FieldValueTypeInvalid')) errors.push(...evaluateRules(o, old, schema, ''));
  if (errors.length > 0) throw invalid(o.kind, String(o.apiVersion).split('/')[0], String(o.metadata.name ?? ''), errors);
  (o as { __strict?: string[] }).__strict = unknown.map((p) => `unknown field "${p}"`);
}

export function strictFieldError(unknown: string[]): never {
  throw badRequest(unknown.join(', '));
}
