import { z } from 'zod';
import {
  resourceQuantityPattern,
  storageSizeInRange,
  storageSizeMaxLength,
  storageSizePattern,
  storageSizeRangeMessage,
  storageSizeRangeRule,
} from './quantity.js';

/**
 * Zod helpers for fields whose CRD schema cannot be derived from a plain zod type: embedded
 * Kubernetes structures (kept as preserve-unknown-fields so the CRD stays small, see ADR 0500)
 * and resource quantities (int-or-string).
 */

/** An embedded Kubernetes object (affinity, a toleration...) typed as its client-node class. */
export function embeddedObject<T extends object>(description: string) {
  return z
    .custom<T>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), { message: 'expected an object' })
    .meta({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description });
}

/** A list of embedded Kubernetes objects. */
export function embeddedList<T extends object>(description: string) {
  return z.array(embeddedObject<T>(description)).meta({ description });
}

/**
 * Largest plain number a quantity may be: 2^50 (1Pi), more bytes or cores than any node has.
 * Unbounded, 1e300 (an integer to JSON Schema) passed and no pod could be built from it.
 */
export const maxQuantityNumber = 2 ** 50;

/**
 * A non-negative resource quantity ("500m", "1Gi", 2). The pattern applies to strings and the
 * minimum and maximum to numbers, on every API server (CRD value validations of an int-or-string field).
 */
export const quantity = z
  .union([
    z.string().regex(new RegExp(resourceQuantityPattern), 'must be a non-negative Kubernetes quantity such as 500m or 1Gi'),
    z.number().int().min(0).max(maxQuantityNumber, `must be at most ${maxQuantityNumber}`),
  ])
  .meta({ 'x-kubernetes-int-or-string': true, pattern: resourceQuantityPattern, minimum: 0, maximum: maxQuantityNumber });

/**
 * A storage size (a string): the pattern and length every API server checks, the range as CEL
 * for servers that evaluate it, and both again in zod for the operator's own parse.
 */
export const storageQuantity = z
  .string()
  .max(storageSizeMaxLength)
  .regex(new RegExp(storageSizePattern), 'must be a storage size such as 10Gi')
  .refine((size) => !new RegExp(storageSizePattern).test(size) || storageSizeInRange(size), storageSizeRangeMessage)
  .meta({ 'x-kubernetes-validations': [{ rule: storageSizeRangeRule(), message: storageSizeRangeMessage }] });

/** A Go-style duration as Prometheus takes it ("30s", "1m"). */
export const duration = z.string().regex(/^(\d+(ms|s|m|h))+$/, 'must be a duration such as 30s or 1m');

/** A DNS-1123 label (names of instances, ConfigMaps...). */
export const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label: lower-case letters, digits and "-"');
