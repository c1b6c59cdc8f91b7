import { z } from 'zod';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { databaseClusterSpecSchema, databaseClusterStatusSchema, group, kind, plural, shortNames, singular, version } from './types.js';
import { clusterNamePattern, maxClusterNameLength } from './validate.js';

type JsonSchema = Record<string, unknown>;

const safeIntegerBound = Number.MAX_SAFE_INTEGER;

/**
 * Turns zod's OpenAPI 3.0 output into a Kubernetes structural schema: drops the safe-integer
 * bounds zod adds to every integer, replaces int-or-string unions by the marker alone (structural
 * schemas forbid typed anyOf branches) and removes keys Kubernetes rejects.
 */
export function toStructural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toStructural);
  if (typeof node !== 'object' || node === null) return node;
  const input = node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === '$schema' || key === 'id') continue;
    if ((key === 'minimum' && value === -safeIntegerBound) || (key === 'maximum' && value === safeIntegerBound)) continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'default' || key === 'x-kubernetes-validations' || key === 'enum') {
      out[key] = value;
      continue;
    }
    out[key] = toStructural(value);
  }
  if (out['x-kubernetes-int-or-string'] === true) {
    delete out.anyOf;
    delete out.type;
  }
  return out;
}

function schemaOf(schema: z.ZodType): JsonSchema {
  return toStructural(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' })) as JsonSchema;
}

/** The CRD object for DatabaseCluster, generated from the zod schemas. */
export function databaseClusterCrd(): V1CustomResourceDefinition {
  const openAPIV3Schema: JsonSchema = {
    type: 'object',
    description: 'A highly available PostgreSQL cluster managed by keelson.',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      // Schema restrictions on metadata.name are checked by every API server (1.20 included), with the field's path.
      metadata: { type: 'object', properties: { name: { type: 'string', maxLength: maxClusterNameLength, pattern: clusterNamePattern } } },
      spec: { ...schemaOf(databaseClusterSpecSchema), default: {} },
      status: schemaOf(databaseClusterStatusSchema),
    },
    'x-kubernetes-validations': [
      {
        rule: "!has(self.spec.switchover) || !has(self.spec.switchover.targetInstance) || self.spec.switchover.targetInstance.startsWith(self.metadata.name + '-')",
        message: 'spec.switchover.targetInstance must name an instance of this cluster (<name>-N)',
        // The rule reads metadata.name, so it lives at the root; fieldPath still reports the field.
        fieldPath: '.spec.switchover.targetInstance',
      },
    ],
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${group}`,
      labels: { 'app.kubernetes.io/name': 'keelson', 'app.kubernetes.io/component': 'crd' },
    },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular, shortNames, listKind: `${kind}List`, categories: ['all', 'keelson'] },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.instances', statusReplicasPath: '.status.instances', labelSelectorPath: '.status.selector' },
          },
          additionalPrinterColumns: [
            { name: 'Instances', type: 'integer', jsonPath: '.spec.instances' },
            { name: 'Ready', type: 'integer', jsonPath: '.status.readyInstances' },
            { name: 'Primary', type: 'string', jsonPath: '.status.currentPrimary' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}
