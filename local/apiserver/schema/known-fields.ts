/**
 * Field knowledge for built-in kinds, taken from client-node's generated models (JSON key and
 * type of every field). A real server decodes into Go structs: unknown fields vanish (or are a
 * 400 under fieldValidation=Strict, which kubectl sends) and wrong JSON types are a 400. This
 * reproduces both so a manifest with a typo fails here as it would on a real cluster.
 */
import * as k8s from '@kubernetes/client-node';
import { badRequest } from '../errors.js';
import { isJsonObject, type KubeObject } from '../types.js';

interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const models = k8s as unknown as Record<string, Model | undefined>;
const microTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const timePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const attributeCache = new Map<string, Map<string, Attribute>>();

function attributesOf(typeName: string): Map<string, Attribute> | undefined {
  const cached = attributeCache.get(typeName);
  if (cached) return cached;
  const model = models[typeName];
  if (!model || typeof model.getAttributeTypeMap !== 'function') return undefined;
  const map = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]));
  attributeCache.set(typeName, map);
  return map;
}

/** The client-node model of a built-in kind, if there is one. */
export function modelName(kind: string): string | undefined {
  const name = kind === 'Event' ? 'CoreV1Event' : `V1${kind}`;
  return attributesOf(name) ? name : undefined;
}

interface Walk {
  unknown: string[];
  typeError?: string;
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'object' : typeof value;
}

function visit(value: unknown, typeName: string, format: string, path: string, walk: Walk): unknown {
  if (value === null || value === undefined || walk.typeError) return value;
  let m = /^Array<(.+)>$/.exec(typeName);
  if (m) {
    if (!Array.isArray(value)) {
      walk.typeError = `json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type []${m[1]}`;
      return value;
    }
    const item = m[1];
    return value.map((v, i) => visit(v, item, '', `${path}[${i}]`, walk));
  }
  m = /^\{ \[key: string\]: (.+); \}$/.exec(typeName);
  if (m) {
    if (!isJsonObject(value)) {
      walk.typeError = `json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type map[string]${m[1]}`;
      return value;
    }
    const item = m[1];
    for (const [k, v] of Object.entries(value)) value[k] = visit(v, item, '', `${path}.${k}`, walk);
    return value;
  }
  const attributes = attributesOf(typeName);
  if (attributes) {
    if (!isJsonObject(value)) {
      walk.typeError = `json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type ${typeName}`;
      return value;
    }
    for (const [k, v] of Object.entries(value)) {
      const attribute = attributes.get(k);
      const childPath = path ? `${path}.${k}` : k;
      if (!attribute) {
        walk.unknown.push(childPath);
        delete value[k];
      } else if (v === null) {
        delete value[k];
      } else {
        value[k] = visit(v, attribute.type, attribute.format, childPath, walk);
      }
    }
    return value;
  }
  if (typeName === 'V1MicroTime') {
    // metav1.MicroTime: exactly six fraction digits, as Go's RFC3339Micro layout demands.
    if (typeof value !== 'string' || !microTimePattern.test(value))
      walk.typeError = `parsing time ${JSON.stringify(String(value))} as "2006-01-02T15:04:05.000000Z07:00": cannot parse (field ${path})`;
    return value;
  }
  if (typeName === 'Date') {
    // metav1.Time: RFC 3339 (fractional seconds allowed when parsing).
    if (typeof value !== 'string' || !timePattern.test(value))
      walk.typeError = `parsing time ${JSON.stringify(String(value))} as "2006-01-02T15:04:05Z07:00": cannot parse (field ${path})`;
    return value;
  }
  if (typeName === 'number') {
    const integral = format === 'int32' || format === 'int64';
    // An int32 field cannot hold more than 32 bits: Go's decoder refuses the number outright.
    const outOfRange = format === 'int32' && typeof value === 'number' && (value > 2147483647 || value < -2147483648);
    if (typeof value !== 'number' || (integral && !Number.isInteger(value)) || outOfRange) {
      walk.typeError = `json: cannot unmarshal ${typeof value === 'number' ? `number ${value}` : jsonType(value)} into Go struct field ${path} of type ${format || 'float64'}`;
    }
  } else if (typeName === 'boolean' && typeof value !== 'boolean') {
    walk.typeError = `json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type bool`;
  }
  return value;
}

/**
 * Drops unknown fields of a built-in object in place and returns their paths; wrong JSON types
 * are a 400 as Go's decoder reports them.
 */
export function dropUnknownFields(o: KubeObject, model: string): string[] {
  const walk: Walk = { unknown: [] };
  visit(o, model, '', '', walk);
  if (walk.typeError) throw badRequest(`${o.kind} in version "${String(o.apiVersion).split('/').pop()}" cannot be handled as a ${o.kind}: ${walk.typeError}`);
  return walk.unknown;
}
