import { z } from 'zod';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { backupKind, backupObjectSpecSchema, backupObjectStatusSchema, backupPlural, backupShortNames, backupSingular } from './backup-kind.js';
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

export function schemaOf(schema: z.ZodType): JsonSchema {
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
  return customResourceDefinition({
    kind,
    plural,
    singular,
    shortNames,
    openAPIV3Schema,
    subresources: {
      status: {},
      scale: { specReplicasPath: '.spec.instances', statusReplicasPath: '.status.instances', labelSelectorPath: '.status.selector' },
    },
    additionalPrinterColumns: [
      { name: 'Instances', type: 'integer', jsonPath: '.spec.instances' },
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyInstances' },
      { name: 'Primary', type: 'string', jsonPath: '.status.currentPrimary' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Disk', type: 'string', jsonPath: '.status.diskUsage' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
}

type Version = V1CustomResourceDefinition['spec']['versions'][number];

interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  openAPIV3Schema: JsonSchema;
  subresources: Version['subresources'];
  additionalPrinterColumns: Version['additionalPrinterColumns'];
}

/** The CRD wrapper every keelson.io kind shares: one served and stored version, status subresource, the keelson category. */
export function customResourceDefinition(definition: KindDefinition): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${definition.plural}.${group}`,
      labels: { 'app.kubernetes.io/name': 'keelson', 'app.kubernetes.io/component': 'crd' },
    },
    spec: {
      group,
      scope: 'Namespaced',
      names: {
        kind: definition.kind,
        plural: definition.plural,
        singular: definition.singular,
        shortNames: definition.shortNames,
        listKind: `${definition.kind}List`,
        categories: ['all', 'keelson'],
      },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: definition.openAPIV3Schema },
          subresources: definition.subresources,
          additionalPrinterColumns: definition.additionalPrinterColumns,
        },
      ],
    },
  };
}

/** The CRD object for Backup, generated from the zod schemas (backup-kind.ts). */
export function backupCrd(): V1CustomResourceDefinition {
  return customResourceDefinition({
    kind: backupKind,
    plural: backupPlural,
    singular: backupSingular,
    shortNames: backupShortNames,
    openAPIV3Schema: {
      type: 'object',
      description: 'One base backup of a DatabaseCluster (pgBackRest). Deleting it deletes no data.',
      required: ['spec'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object' },
        spec: schemaOf(backupObjectSpecSchema),
        status: schemaOf(backupObjectStatusSchema),
      },
    },
    subresources: { status: {} },
    additionalPrinterColumns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.cluster' },
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Label', type: 'string', jsonPath: '.status.label' },
      { name: 'Member', type: 'string', jsonPath: '.status.member', priority: 1 },
      { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes', priority: 1 },
      { name: 'Stopped', type: 'date', jsonPath: '.status.stoppedAt' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
}
