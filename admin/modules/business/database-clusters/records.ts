import type { DatabaseClusterObject } from './kube.js';

const millis = (value: string | Date | undefined): number | null => (value === undefined ? null : new Date(value).getTime());

/** A cluster as the admin front end lists it: camelCase, flat, identified by namespace and name. */
export function toClusterRecord(object: DatabaseClusterObject): Record<string, unknown> {
  const spec = object.spec ?? {};
  const status = object.status ?? {};
  return {
    id: `${object.metadata.namespace}/${object.metadata.name}`,
    name: object.metadata.name,
    namespace: object.metadata.namespace,
    instances: spec.instances ?? null,
    postgresVersion: spec.postgresVersion ?? null,
    phase: status.phase ?? null,
    readyInstances: status.readyInstances ?? 0,
    currentPrimary: status.currentPrimary ?? null,
    createdAt: millis(object.metadata.creationTimestamp),
    deleting: object.metadata.deletionTimestamp !== undefined,
    resourceVersion: object.metadata.resourceVersion ?? null,
  };
}

/** Full detail: the record plus spec, status and conditions as the API server holds them. */
export function toClusterDetail(object: DatabaseClusterObject): Record<string, unknown> {
  return { ...toClusterRecord(object), spec: object.spec ?? {}, status: object.status ?? {}, labels: object.metadata.labels ?? {} };
}
