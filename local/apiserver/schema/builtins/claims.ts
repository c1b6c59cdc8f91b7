/** PersistentVolumeClaim validation: what a claim must ask for, and what may change later. */
import { badRequest, forbidden, invalidValue, required, type FieldError } from '../../errors.js';
import { clone, isJsonObject, jsonEqual, type JsonObject, type KubeObject } from '../../types.js';
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

/** resource.Quantity's own syntax: a quantity that does not parse is a decoding error (400). */
const quantitySyntax = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

export function decodeClaim(o: KubeObject): void {
  const storage = storageOf(obj(o.spec));
  if (storage === undefined || storage === null) return;
  if (typeof storage !== 'string' && typeof storage !== 'number') {
    throw badRequest(
      `${o.kind} in version "v1" cannot be handled as a ${o.kind}: json: cannot unmarshal ${Array.isArray(storage) ? 'array' : typeof storage} into Go struct field ResourceRequirements.spec.resources.requests of type resource.Quantity`,
    );
  }
  if (!quantitySyntax.test(String(storage)) || Number.isNaN(quantityValue(storage))) {
    throw badRequest(
      `${o.kind} in version "v1" cannot be handled as a ${o.kind}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
  }
}

/** A claim must ask for some storage: zero or less is refused (the quantity prints as Go prints it, "0" for any zero). */
function positiveStorage(storage: unknown): FieldError[] {
  const value = quantityValue(storage);
  if (!(value <= 0)) return [];
  return [invalidValue('spec.resources[storage]', value === 0 ? '0' : String(storage), 'must be greater than zero')];
}

function validateNewSpec(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const modes = Array.isArray(spec.accessModes) ? spec.accessModes : [];
  if (modes.length === 0) errors.push(required('spec.accessModes', 'at least 1 access mode is required'));
  modes.forEach((m, i) => {
    if (!accessModes.has(String(m)))
      errors.push({
        type: 'FieldValueNotSupported',
        field: `spec.accessModes[${i}]`,
        message: `Unsupported value: ${JSON.stringify(m)}: supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
      });
  });
  if (storageOf(spec) === undefined) errors.push(required('spec.resources[storage]'));
  else errors.push(...positiveStorage(storageOf(spec)));
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
  if (!jsonEqual(comparable, before))
    errors.push(forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  errors.push(...positiveStorage(storageOf(spec)));
  if (quantityValue(storageOf(spec)) < quantityValue(storageOf(before)))
    errors.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  return errors;
}
