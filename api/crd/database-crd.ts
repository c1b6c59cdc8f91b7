import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { customResourceDefinition, schemaOf } from './crd.js';
import { databaseKind, databaseObjectSpecSchema, databaseObjectStatusSchema, databasePlural, databaseShortNames, databaseSingular } from './database-kind.js';

/** The CRD object for Database, generated from the zod schemas (database-kind.ts). */
export function databaseCrd(): V1CustomResourceDefinition {
  return customResourceDefinition({
    kind: databaseKind,
    plural: databasePlural,
    singular: databaseSingular,
    shortNames: databaseShortNames,
    openAPIV3Schema: {
      type: 'object',
      description: 'A PostgreSQL database of a DatabaseCluster, with its extensions and schemas, kept in place by the cluster leader.',
      required: ['spec'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object' },
        spec: schemaOf(databaseObjectSpecSchema),
        status: schemaOf(databaseObjectStatusSchema),
      },
    },
    subresources: { status: {} },
    additionalPrinterColumns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.cluster' },
      { name: 'PG Name', type: 'string', jsonPath: '.spec.name' },
      { name: 'Owner', type: 'string', jsonPath: '.spec.owner', priority: 1 },
      { name: 'Applied', type: 'boolean', jsonPath: '.status.applied' },
      { name: 'Message', type: 'string', jsonPath: '.status.message' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
}
