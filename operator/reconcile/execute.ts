import type { V1Pod } from '@kubernetes/client-node';
import { describeApiError } from '../../lib/kube/client.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { Day2Step } from './day2.js';
import type { ReconcileDeps } from './deps.js';

function podIp(pods: V1Pod[], name: string): string | undefined {
  return pods.find((pod) => pod.metadata?.name === name)?.status?.podIP;
}

/** Carries out one planned day-2 step; false when it could not be done (the reconcile requeues). */
export async function executeStep(deps: ReconcileDeps, cluster: DatabaseCluster, pods: V1Pod[], step: Day2Step): Promise<boolean> {
  const { namespace } = cluster.metadata;
  const log = deps.logger.child({ cluster: `${namespace}/${cluster.metadata.name}`, step: step.type });
  if (step.type === 'deletePod') {
    deps.recordWrite('Pod', 'delete');
    try {
      await deps.api.core.deleteNamespacedPod({ namespace, name: step.pod });
    } catch (err) {
      log.warn({ err: describeApiError(err), pod: step.pod }, 'could not delete pod');
      return false;
    }
    await deps.events.record(cluster.metadata, 'Normal', 'RollingUpdate', `replaced ${step.pod}: ${step.reason}`);
    return true;
  }
  if (step.type === 'switchover') {
    const host = podIp(pods, step.leader);
    if (!host) return false;
    try {
      const result = await deps.haNode.switchover(host, step.leader, step.candidate);
      if (result.status !== 200 && result.status !== 202) {
        log.warn({ status: result.status, body: result.body.slice(0, 200) }, 'switchover refused');
        await deps.events.record(
          cluster.metadata,
          'Warning',
          'SwitchoverRefused',
          `${step.leader} → ${step.candidate}: ${result.status} ${result.body.slice(0, 200)}`,
        );
        return false;
      }
    } catch (err) {
      log.warn({ err: String(err) }, 'switchover call failed');
      return false;
    }
    await deps.events.record(cluster.metadata, 'Normal', 'Switchover', `${step.leader} → ${step.candidate}: ${step.reason}`);
    return true;
  }
  return true;
}
