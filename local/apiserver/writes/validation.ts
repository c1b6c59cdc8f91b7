/** Checks a real server makes before storing: decoding rules (400) and field validation (422). */
import { badRequest, invalidValue, required, type FieldError } from '../errors.js';
import { isJsonObject, type KubeObject } from '../types.js';

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const subdomainRule =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

export type NameRule = 'subdomain' | 'label' | 'path';

export function validateName(name: string, rule: NameRule, field = 'metadata.name'): FieldError[] {
  if (rule === 'path') {
    if (name === '.' || name === '..' || /[/%]/.test(name)) return [invalidValue(field, name, "may not contain '/' or '%'")];
    return [];
  }
  if (rule === 'label') {
    if (name.length > 63 || !dns1123Label.test(name)) {
      return [
        invalidValue(
          field,
          name,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
      ];
    }
    return [];
  }
  if (name.length > 253 || !dns1123Subdomain.test(name)) {
    return [invalidValue(field, name, subdomainRule)];
  }
  return [];
}

const qualifiedNameRule =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** apimachinery's IsQualifiedName: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) return [`a qualified name ${qualifiedNameRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const errors: string[] = [];
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else {
      if (Buffer.byteLength(prefix) > 253) errors.push('prefix part must be no more than 253 characters');
      if (!dns1123Subdomain.test(prefix)) errors.push(`prefix part ${subdomainRule}`);
    }
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (Buffer.byteLength(name) > 63) errors.push('name part must be no more than 63 characters');
  if (!qualifiedNamePart.test(name)) errors.push(`name part ${qualifiedNameRule}`);
  return errors;
}

const labelValueRule =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** apimachinery's IsValidLabelValue: at most 63 characters, empty or alphanumeric at both ends. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (Buffer.byteLength(value) > 63) errors.push('must be no more than 63 characters');
  if (!labelValue.test(value)) errors.push(labelValueRule);
  return errors;
}

/** All annotations together (keys and values, in bytes) may hold at most 256 KiB. */
const totalAnnotationBytes = 256 * 1024;

function annotationErrors(annotations: Record<string, string>): FieldError[] {
  const errors: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const message of qualifiedNameErrors(key.toLowerCase())) errors.push(invalidValue('metadata.annotations', key, message));
    total += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (total > totalAnnotationBytes)
    errors.push({ type: 'FieldValueTooLong', field: 'metadata.annotations', message: `Too long: must have at most ${totalAnnotationBytes} bytes` });
  return errors;
}

const standardFinalizers = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** Finalizers are qualified names; built-in kinds also want a domain unless the name is a standard one. */
function finalizerErrors(finalizers: string[], builtIn: boolean): FieldError[] {
  const errors = finalizers.flatMap((f) => qualifiedNameErrors(f).map((message) => invalidValue('metadata.finalizers', f, message)));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errors.push(invalidValue('metadata.finalizers', finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  if (builtIn) {
    finalizers.forEach((f, i) => {
      if (!f.includes('/') && !standardFinalizers.has(f))
        errors.push(invalidValue(`metadata.finalizers[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    });
  }
  return errors;
}

/** Decoding rules for metadata: wrong JSON types are 400s, as Go's decoder reports them. */
export function decodeMetadata(obj: KubeObject): void {
  const meta = obj.metadata as unknown;
  if (!isJsonObject(meta)) throw badRequest(`${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: metadata must be an object`);
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isJsonObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      throw badRequest(
        `${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: json: cannot unmarshal into Go struct field ObjectMeta.metadata.${field} of type string`,
      );
    }
  }
  if (meta.finalizers !== undefined && (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string'))) {
    throw badRequest(`${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${obj.kind}: metadata.finalizers must be a list of strings`);
  }
}

export function validateMetadata(obj: KubeObject, builtIn: boolean): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(obj.metadata.labels ?? {})) {
    for (const message of qualifiedNameErrors(key)) errors.push(invalidValue('metadata.labels', key, message));
    if (value.length > 63 || !labelValue.test(value))
      errors.push(
        invalidValue(
          'metadata.labels',
          value,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
  }
  errors.push(...annotationErrors(obj.metadata.annotations ?? {}), ...finalizerErrors(obj.metadata.finalizers ?? [], builtIn));
  const owners = obj.metadata.ownerReferences ?? [];
  owners.forEach((o, i) => {
    for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) if (!o[f]) errors.push(required(`metadata.ownerReferences[${i}].${f}`));
  });
  if (owners.filter((o) => o.controller).length > 1)
    errors.push(invalidValue('metadata.ownerReferences', owners, 'Only one reference can have Controller set to true'));
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
