import { z } from 'zod';

/**
 * The leaf fields of a zod object schema as dotted paths ("ha.ttl", "exporter.collectors.key"):
 * nested objects are walked, everything else (maps, lists, embedded Kubernetes objects) is a leaf.
 */
export function specFieldPaths(schema: z.ZodType, prefix = ''): string[] {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  if (!(inner instanceof z.ZodObject)) return [prefix];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, value]) => specFieldPaths(value, prefix ? `${prefix}.${key}` : key));
}
