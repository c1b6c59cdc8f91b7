import type { KubernetesObject } from '@kubernetes/client-node';
import type { RawCluster } from '../kube-api.js';
import { Finalizer, Labels, names, podSelector, selectorString } from '../../api/naming.js';
import type { ReconcileDeps, ReconcileResult } from './deps.js';
import { releaseDatabases } from './managed-databases.js';

/** Leases of a cluster: labelled with it, owned by it, or its leader Lease by name. */
export function isClusterLease(lease: KubernetesObject, cluster: { name: string; uid: string }): boolean {
  if (lease.metadata?.labels?.[Labels.cluster] === cluster.name) return true;
  if (lease.metadata?.ownerReferences?.some((ref) => ref.uid === cluster.uid)) return true;
  return lease.metadata?.name === names(cluster.name).leaderLease;
}

/**
 * Deletion: the StatefulSet goes first and the Leases only once no instance pod is left, because
 * a member that is still shutting down would write its Leases again; then the finalizer is released.
 * Returns a delay while pods are still terminating.
 */
export async function finalize(deps: ReconcileDeps, raw: RawCluster): Promise<ReconcileResult> {
  const { name, namespace, uid } = raw.metadata as { name: string; namespace: string; uid: string };
  const statefulSet = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: names(name).statefulSet, namespace } };
  if (await deps.api.read(statefulSet)) {
    deps.recordWrite('StatefulSet', 'delete');
    await deps.api.delete(statefulSet);
  }
  const pods = await deps.api.listPods(namespace, selectorString(podSelector(name)));
  if (pods.length > 0) {
    for (const pod of pods.filter((p) => !p.metadata?.deletionTimestamp)) {
      deps.recordWrite('Pod', 'delete');
      await deps.api.delete({ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata!.name!, namespace } });
    }
    return { requeueAfterMs: 1_000 };
  }
  for (const lease of await deps.api.listLeases(namespace)) {
    if (!isClusterLease(lease, { name, uid })) continue;
    deps.recordWrite('Lease', 'delete');
    await deps.api.deleteLease(namespace, lease.metadata!.name!);
  }
  await releaseDatabases(deps, namespace, name);
  if (!raw.metadata?.finalizers?.includes(Finalizer)) return {};
  deps.recordWrite('DatabaseCluster', 'update');
  await deps.api.replaceCluster({ ...raw, metadata: { ...raw.metadata, finalizers: raw.metadata.finalizers.filter((f) => f !== Finalizer) } });
  deps.logger.info({ cluster: `${namespace}/${name}` }, 'instances stopped, DCS leases deleted, finalizer released');
  return {};
}
