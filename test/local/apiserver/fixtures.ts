/** A test CRD shaped like Keelson's DatabaseCluster: status + scale, printer columns, defaults, CEL. */
export const pgClusterCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'pgclusters.demo.example.com' },
  spec: {
    group: 'demo.example.com',
    scope: 'Namespaced',
    names: { plural: 'pgclusters', singular: 'pgcluster', kind: 'PgCluster', shortNames: ['pgc'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.instances', statusReplicasPath: '.status.instances', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Instances', type: 'integer', jsonPath: '.spec.instances' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['instances'],
                'x-kubernetes-validations': [
                  { rule: 'self.instances <= self.maxInstances', message: 'instances must not exceed maxInstances' },
                  { rule: 'self.storageClass == oldSelf.storageClass', message: 'storageClass is immutable' },
                ],
                properties: {
                  instances: { type: 'integer', minimum: 1 },
                  maxInstances: { type: 'integer', default: 9 },
                  version: { type: 'string', enum: ['15', '16'], default: '15' },
                  storageClass: { type: 'string', default: 'local' },
                  parameters: { type: 'object', additionalProperties: { type: 'string' } },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
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

export function pgCluster(name: string, spec: Record<string, unknown> = { instances: 3 }): Record<string, unknown> {
  return { apiVersion: 'demo.example.com/v1', kind: 'PgCluster', metadata: { name, namespace: 'default' }, spec };
}
