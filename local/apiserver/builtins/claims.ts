/** PersistentVolumeClaim validation: what a claim must ask for, and what may change later. */
import { forbidden, required, type FieldError } from '../errors.js';
import { clone, isJsonObject, jsonEqual, type JsonObject, type KubeObject } from '../types.js';
import { obj } from './define.js';

const accessModes = new Set(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']);
const suffixes = ['k', 'M', 'G', 'T', 'P', 'E'];

/** A resource quantity as a number ("1Gi", "500M", "1e3"); NaN when it is not one. */
export function quantityValue(value: unknown): number {
  const match = /^([+-]?[\d.]+(?:[eE][+-]?\d+)?)([kMGTPE]i?|m)?$/.exec(String(value).trim());
  if (!match) return Number.NaN;
  const suffix = match[2] ?? '';
  if (suffix === 'm') return Number(match[1]) / 1000;
  const power = suffixes.indexOf(suffix.replace('i', '')) + 1;
  return Number(match[1]) * (suffix.endsWith('i') ? 1024 ** power : 1000 ** power);
}

export const storageOf = (spec: JsonObject): unknown => obj(obj(spec.resources).requests).storage;

function validateNewSpec(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const modes = Array.isArray(spec.accessModes) ? spec.accessModes : [];
  if (modes.length === 0) errors.push(required('spec.accessModes', 'at least 1 access mode is required'));
  modes.forEach((m, i) => {
    if (!accessModes.has(String(m))) errors.push({ type: 'FieldValueNotSupported', field: `spec.accessModes[${i}]`, message: `Unsupported value: ${JSON.stringify(m)}: supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"` });
  });
  if (storageOf(spec) === undefined) errors.push(required('spec.resources[storage]'));
  return errors;
}

/**
 * On create: access modes and a storage request are required. On update the spec is immutable
 * except `volumeName` (set once, by binding) and, for a Bound claim, the storage request, which
 * may only grow (whether its StorageClass allows that is admission's check: storage-classes.ts).
 * The phase is the stored one: a status in an update's body is ignored.
 */
export function validateClaim(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = obj(o.spec);
  if (!old) return validateNewSpec(spec);
  const before = obj(old.spec);
  const comparable = clone(spec);
  if (!before.volumeName) comparable.volumeName = before.volumeName;
  const bound = obj(o.status).phase === 'Bound';
  if (bound && isJsonObject(comparable.resources) && isJsonObject(comparable.resources.requests)) comparable.resources.requests.storage = storageOf(before);
  const errors: FieldError[] = [];
  if (!jsonEqual(comparable, before)) errors.push(forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  if (quantityValue(storageOf(spec)) < quantityValue(storageOf(before))) errors.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  return errors;
}
