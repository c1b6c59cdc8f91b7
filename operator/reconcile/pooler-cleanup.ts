import type { KubernetesObject } from '@kubernetes/client-node';
import type { PdbApiVersion } from '../capabilities.js';
import { Labels } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';

/**
 * Removes the pooler objects a cluster no longer wants (spec.pooler disabled or removed, the
 * read-only pooler turned off): apply only creates and updates, so without this they would stay
 * and keep serving. Safe by construction: a candidate must carry this cluster's label AND the
 * pooler label, be controlled by this very DatabaseCluster (owner uid), and be absent from the
 * desired objects. Secrets are never deleted: the operator holds no delete right on Secrets (least
 * privilege), and the pooler role's Secret matches the role that stays in the database; it goes
 * with the cluster through its owner reference, and a pooler turned on again reuses it.
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
  ];
  return pdbApiVersion ? [...kinds, { apiVersion: pdbApiVersion, kind: 'PodDisruptionBudget' }] : kinds;
}

const keyOf = (object: KubernetesObject) => `${object.kind}/${object.metadata?.name}`;

/** Of the observed objects, the pooler's ones this cluster no longer wants and may delete now. */
export function unwantedPoolerObjects(
  observed: KubernetesObject[],
  desired: KubernetesObject[],
  cluster: { name: string; uid: string | undefined },
): KubernetesObject[] {
  if (!cluster.uid) return [];
  const wanted = new Set(desired.map(keyOf));
  return observed.filter((object) => {
    const labels = object.metadata?.labels ?? {};
    if (labels[Labels.cluster] !== cluster.name || !labels[Labels.pooler]) return false;
    if (!object.metadata?.ownerReferences?.some((ref) => ref.controller && ref.uid === cluster.uid)) return false;
    return object.kind !== 'Secret' && !object.metadata.deletionTimestamp && !wanted.has(keyOf(object));
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
  const observed = await Promise.all(
    poolerKinds(pdbApiVersion).map(async (k) =>
      (await deps.api.listObjects(k.apiVersion, k.kind, cluster.namespace, selector)).map((o) => ({ ...o, apiVersion: k.apiVersion, kind: k.kind })),
    ),
  );
  const doomed = unwantedPoolerObjects(observed.flat(), desired, cluster);
  for (const object of doomed) {
    deps.recordWrite(object.kind ?? 'unknown', 'delete');
    await deps.api.delete(object);
  }
  return doomed.map(keyOf);
}
