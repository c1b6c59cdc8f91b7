import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { DatabaseClusterStatus } from '../../api/crd/types.js';
import { names } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';

export type PoolerStatus = NonNullable<DatabaseClusterStatus['pooler']>;

/**
 * status.pooler while the pooler is enabled: the Deployment's pods and ready ones, and from the
 * primary's ha-node (GET /poolers) how many are paused and how many reach PostgreSQL. Without an
 * answer from the primary the two counts are left out rather than guessed. The read-only pooler
 * has its own counts: its Deployment's, and how many point at a replica.
 */
export async function poolerStatus(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
): Promise<PoolerStatus | undefined> {
  if (!cluster.spec.pooler.enabled) return undefined;
  const { namespace, name } = cluster.metadata;
  const apps = deps.api.kubeConfig.makeApiClient(AppsV1Api);
  const deployment = await apps.readNamespacedDeployment({ namespace, name: names(name).poolerDeployment }).catch(() => undefined);
  const status: PoolerStatus = { instances: deployment?.status?.replicas ?? 0, readyInstances: deployment?.status?.readyReplicas ?? 0 };
  const host = pods.find((pod) => pod.metadata?.name === primary)?.status?.podIP;
  const listed = host ? await deps.haNode.poolers(host).catch(() => undefined) : undefined;
  const reports = listed?.filter((r) => !r.readOnly);
  if (reports) {
    status.paused = reports.filter((r) => r.answered && r.paused).length;
    status.reachingPostgres = reports.filter((r) => r.answered && r.reachable).length;
  }
  if (cluster.spec.pooler.readOnly.enabled) {
    const readOnly = await apps.readNamespacedDeployment({ namespace, name: names(name).poolerReadOnlyDeployment }).catch(() => undefined);
    status.readOnly = { instances: readOnly?.status?.replicas ?? 0, readyInstances: readOnly?.status?.readyReplicas ?? 0 };
    // On a replica: answering, reaching its PostgreSQL, and pointed elsewhere than the primary.
    if (listed) status.readOnly.onReplicas = listed.filter((r) => r.readOnly && r.answered && r.reachable && r.target?.host !== host).length;
  }
  return status;
}
