/** Checks a real server makes before storing: decoding rules (400) and field validation (422). */
import { badRequest, invalidValue, required, type FieldError } from './errors.js';
import { isJsonObject, type KubeObject } from './types.js';

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export type NameRule = 'subdomain' | 'label' | 'path';

export function validateName(name: string, rule: NameRule, field = 'metadata.name'): FieldError[] {
  if (rule === 'path') {
    if (name === '.' || name === '..' || /[/%]/.test(name)) return [invalidValue(field, name, 'may not contain \'/\' or \'%\'')];
    return [];
  }
  if (rule === 'label') {
    if (name.length > 63 || !dns1123Label.test(name)) {
      return [invalidValue(field, name, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")];
    }
    return [];
  }
  if (name.length > 253 || !dns1123Subdomain.test(name)) {
    return [invalidValue(field, name, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")];
  }
  return [];
}

function validQualifiedName(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (parts.length === 2 && (parts[0].length === 0 || parts[0].length > 253 || !dns1123Subdomain.test(parts[0]))) return false;
  return name.length > 0 && name.length <= 63 && qualifiedNamePart.test(name);
}

/** Decoding rules for metadata: wrong JSON types are 400s, as Go's decoder reports them. */
export function decodeMetadata(obj: KubeObject): void {
  const meta = obj.metadata as unknown;
  if (!isJsonObject(meta)) throw badRequest(`${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: metadata must be an object`);
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isJsonObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      throw badRequest(`${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: json: cannot unmarshal into Go struct field ObjectMeta.metadata.${field} of type string`);
    }
  }
  if (meta.finalizers !== undefined && (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string'))) {
    throw badRequest(`${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: metadata.finalizers must be a list of strings`);
  }
}

export function validateMetadata(obj: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(obj.metadata.labels ?? {})) {
    if (!validQualifiedName(key)) errors.push(invalidValue('metadata.labels', key, 'name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character'));
    if (value.length > 63 || !labelValue.test(value)) errors.push(invalidValue('metadata.labels', value, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"));
  }
  for (const key of Object.keys(obj.metadata.annotations ?? {})) {
    if (!validQualifiedName(key.toLowerCase())) errors.push(invalidValue('metadata.annotations', key, 'name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\''));
  }
  const owners = obj.metadata.ownerReferences ?? [];
  owners.forEach((o, i) => {
    for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) if (!o[f]) errors.push(required(`metadata.ownerReferences[${i}].${f}`));
  });
  if (owners.filter((o) => o.controller).length > 1) errors.push(invalidValue('metadata.ownerReferences', owners, 'Only one reference can have Controller set to true'));
  return errors;
}

const microTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

/**
 * MicroTime fields (Lease acquireTime/renewTime) are decoded by Go with the layout
 * 2006-01-02T15:04:05.000000Z07:00: exactly six fraction digits, anything else is a 400.
 */
export function decodeMicroTime(obj: KubeObject, path: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string' || !microTime.test(value) || Number.isNaN(Date.parse(value))) {
    throw badRequest(
      `${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: parsing time ${JSON.stringify(String(value))} as "2006-01-02T15:04:05.000000Z07:00": cannot parse ${JSON.stringify(String(value))} as "2006-01-02T15:04:05.000000Z07:00" (field ${path})`,
    );
  }
}

/** Now as a MicroTime string (RFC 3339 with microseconds). */
export function nowMicroTime(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Now as a metav1.Time string (RFC 3339, whole seconds). */
export function nowTime(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
