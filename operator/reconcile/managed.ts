import type { V1Pod } from '@kubernetes/client-node';
import type { DatabaseCluster, DatabaseClusterStatus } from '../../api/crd/types.js';
import type { ManagedReport } from '../../api/crd/managed-status.js';
import type { ReconcileDeps } from './deps.js';
import { databasesOf, reconcileDatabases } from './managed-databases.js';
import { rolesOutcome } from './managed-roles.js';
import { stampCondition } from './replica-status.js';

/**
 * spec.roles and the Database objects, as far as the operator takes part: it never connects to
 * PostgreSQL; it asks the primary's ha-node what its last pass found (GET /managed) and writes
 * that into the DatabaseCluster's and each Database's status, with Events. Nothing is asked while
 * the cluster has neither.
 */
export async function reconcileManaged(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  pods: V1Pod[],
  primary: string | undefined,
  status: DatabaseClusterStatus,
  now: Date,
): Promise<{ waiting: boolean }> {
  const { name, namespace } = cluster.metadata;
  const databases = databasesOf(await deps.api.listDatabases(namespace).catch(() => []), name);
  if (cluster.spec.roles.length === 0 && databases.length === 0) return { waiting: false };
  const host = pods.find((pod) => pod.metadata?.name === primary)?.status?.podIP;
  let report: ManagedReport | undefined;
  if (host) {
    report = await deps.haNode.managed(host).catch((error: Error) => {
      deps.logger.debug({ err: error.message }, 'the leader did not report its managed roles and databases');
      return undefined;
    });
  }
  const roles = rolesOutcome(cluster, report);
  if (roles.roles) status.roles = roles.roles;
  if (roles.condition)
    status.conditions = [...(status.conditions ?? []), stampCondition(roles.condition, cluster.status?.conditions, cluster.metadata.generation, now)];
  for (const event of roles.events) await deps.events.record(cluster.metadata, event.type, event.reason, event.message);
  const databasesWaiting = await reconcileDatabases(deps, databases, report);
  return { waiting: roles.waiting || databasesWaiting };
}
