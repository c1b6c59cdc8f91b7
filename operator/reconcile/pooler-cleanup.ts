import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { PdbApiVersion } from '../capabilities.js';
import { Labels } from '../naming.js';
import type { ReconcileDeps } from './cluster.js';

/**
 * Removes the pooler objects a cluster no longer wants (spec.pooler disabled or removed, the
 * read-only pooler turned off): apply only creates and updates, so without this they would stay
 * and keep serving. Safe by construction: a candidate must carry this cluster's label AND the
 * pooler label, be controlled by this very DatabaseCluster (owner uid), and be absent from the
 * desired objects. The pooler role's Secret also waits until no pod of the cluster mounts it, so
 * a database pod of the old revision never loses a volume it still names.
 */

export interface OwnedKind {
  apiVersion: string;
  kind: string;
}

/** The kinds the operator makes for a pooler; the PodDisruptionBudget in the version the server serves. */
export function poolerKinds(pdbApiVersion: PdbApiVersion | undefined): OwnedKind[] {
  const kinds: OwnedKind[] = [
    { apiVersion: 'apps/v1', kind: 'Deployment' },
    { apiVersion: 'v1', kind: 'Service' },
    { apiVersion: 'v1', kind: 'ConfigMap' },
    { apiVersion: 'v1', kind: 'Secret' },
  ];
  return pdbApiVersion ? [...kinds, { apiVersion: pdbApiVersion, kind: 'PodDisruptionBudget' }] : kinds;
}

const keyOf = (object: KubernetesObject) => `${object.kind}/${object.metadata?.name}`;

/** Names of the Secrets the pods mount as volumes (or project). */
export function mountedSecrets(pods: V1Pod[]): Set<string> {
  const names = new Set<string>();
  for (const pod of pods) {
    for (const volume of pod.spec?.volumes ?? []) {
      if (volume.secret?.secretName) names.add(volume.secret.secretName);
      for (const source of volume.projected?.sources ?? []) if (source.secret?.name) names.add(source.secret.name);
    }
  }
  return names;
}

/** Of the observed objects, the pooler's ones this cluster no longer wants and may delete now. */
export function unwantedPoolerObjects(
  observed: KubernetesObject[],
  desired: KubernetesObject[],
  cluster: { name: string; uid: string | undefined },
  secretsInUse: Set<string>,
): KubernetesObject[] {
  if (!cluster.uid) return [];
  const wanted = new Set(desired.map(keyOf));
  return observed.filter((object) => {
    const labels = object.metadata?.labels ?? {};
    if (labels[Labels.cluster] !== cluster.name || !labels[Labels.pooler]) return false;
    if (!object.metadata?.ownerReferences?.some((ref) => ref.controller && ref.uid === cluster.uid)) return false;
    if (object.metadata.deletionTimestamp || wanted.has(keyOf(object))) return false;
    return object.kind !== 'Secret' || !secretsInUse.has(object.metadata.name ?? '');
  });
}

/** Lists the pooler kinds, deletes what unwantedPoolerObjects picks, and returns what went. */
export async function removeUnwantedPoolerObjects(
  deps: ReconcileDeps,
  cluster: { name: string; namespace: string; uid: string | undefined },
  desired: KubernetesObject[],
  pdbApiVersion: PdbApiVersion | undefined,
): Promise<string[]> {
  const selector = `${Labels.cluster}=${cluster.name}`;
  const [observed, pods] = await Promise.all([
    Promise.all(poolerKinds(pdbApiVersion).map(async (k) => (await deps.api.listObjects(k.apiVersion, k.kind, cluster.namespace, selector)).map((o) => ({ ...o, apiVersion: k.apiVersion, kind: k.kind })))),
    deps.api.listPods(cluster.namespace, selector),
  ]);
  const doomed = unwantedPoolerObjects(observed.flat(), desired, cluster, mountedSecrets(pods));
  for (const object of doomed) {
    deps.recordWrite(object.kind ?? 'unknown', 'delete');
    await deps.api.delete(object);
  }
  return doomed.map(keyOf);
}
