/**
 * Test CRDs shaped like Keelson's DatabaseCluster (status + scale subresources, printer columns,
 * defaults), shared by the stand-in tests and the oracle contract suite. CEL rules are optional
 * because kube-apiserver 1.20 (the oracle) has none.
 */
export interface DatabaseCrdOptions {
  group: string;
  plural: string;
  kind: string;
  shortNames?: string[];
  categories?: string[];
  /** Adds `x-kubernetes-validations` (a plain rule and a transition rule) and the fields they read. */
  cel?: boolean;
}

const celSpec = {
  'x-kubernetes-validations': [
    { rule: 'self.instances <= self.maxInstances', message: 'instances must not exceed maxInstances' },
    { rule: 'self.storageClass == oldSelf.storageClass', message: 'storageClass is immutable' },
  ],
  properties: {
    maxInstances: { type: 'integer', default: 9 },
    storageClass: { type: 'string', default: 'local' },
    parameters: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

export function databaseCrd(options: DatabaseCrdOptions) {
  const specProperties = {
    instances: { type: 'integer', minimum: 1 },
    version: { type: 'string', enum: ['15', '16'], default: '15' },
    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    ...(options.cel ? celSpec.properties : {}),
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${options.plural}.${options.group}` },
    spec: {
      group: options.group,
      scope: 'Namespaced',
      names: {
        plural: options.plural,
        singular: options.kind.toLowerCase(),
        kind: options.kind,
        shortNames: options.shortNames,
        categories: options.categories,
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.instances', statusReplicasPath: '.status.instances', labelSelectorPath: '.status.selector' },
          },
          additionalPrinterColumns: [
            { name: 'Instances', type: 'integer', jsonPath: '.spec.instances' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['instances'],
                  ...(options.cel ? { 'x-kubernetes-validations': celSpec['x-kubernetes-validations'] } : {}),
                  properties: specProperties,
                },
                status: {
                  type: 'object',
                  properties: {
                    phase: { type: 'string' },
                    instances: { type: 'integer' },
                    selector: { type: 'string' },
                    observedGeneration: { type: 'integer' },
                    conditions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** The stand-in tests' CRD: pgclusters.demo.example.com with CEL rules. */
export const pgClusterCrd = databaseCrd({
  group: 'demo.example.com',
  plural: 'pgclusters',
  kind: 'PgCluster',
  shortNames: ['pgc'],
  categories: ['all'],
  cel: true,
});

export function pgCluster(name: string, spec: Record<string, unknown> = { instances: 3 }): Record<string, unknown> {
  return { apiVersion: 'demo.example.com/v1', kind: 'PgCluster', metadata: { name, namespace: 'default' }, spec };
}
