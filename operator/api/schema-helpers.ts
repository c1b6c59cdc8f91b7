import { z } from 'zod';

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

const quantityPattern = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i?|[mkMGTPE])?$/;

/** A Kubernetes resource quantity ("500m", "1Gi", 2). */
export const quantity = z
  .union([z.string().regex(quantityPattern, 'must be a Kubernetes quantity such as 500m or 1Gi'), z.number()])
  .meta({ 'x-kubernetes-int-or-string': true });

/** A Kubernetes quantity that must be a string (storage sizes). */
export const storageQuantity = z.string().regex(/^(\d+(\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/, 'must be a storage size such as 10Gi');

/** A Go-style duration as Prometheus takes it ("30s", "1m"). */
export const duration = z.string().regex(/^(\d+(ms|s|m|h))+$/, 'must be a duration such as 30s or 1m');

/** A DNS-1123 label (names of instances, ConfigMaps...). */
export const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label: lower-case letters, digits and "-"');
