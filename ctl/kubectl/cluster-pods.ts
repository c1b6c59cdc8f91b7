import * as k8s from '@kubernetes/client-node';
import { describeApiError } from '../../lib/kube/client.js';
import { group, plural, version, type DatabaseCluster } from '../../api/crd/types.js';
import { Labels, Roles } from '../../api/naming.js';
import { UnreachableError } from '../client.js';

/** What `kubectl keelson` reads from the Kubernetes API: the DatabaseCluster and its pods with their roles. */

export interface PodSummary {
  name: string;
  role: string;
  phase: string;
  ready: boolean;
  node?: string;
}

export function podSummary(pod: k8s.V1Pod): PodSummary {
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return {
    name: pod.metadata?.name ?? '',
    role: pod.metadata?.labels?.[Labels.role] ?? '',
    phase: pod.status?.phase ?? 'Unknown',
    ready,
    node: pod.spec?.nodeName,
  };
}

export async function clusterPods(kubeConfig: k8s.KubeConfig, namespace: string, cluster: string): Promise<PodSummary[]> {
  try {
    const pods = await kubeConfig.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace, labelSelector: `${Labels.cluster}=${cluster}` });
    return pods.items.map(podSummary).sort((a, b) => a.name.localeCompare(b.name));
  } catch (error) {
    throw new UnreachableError(`cannot list the pods of ${cluster}: ${describeApiError(error)}`);
  }
}

/** The DatabaseCluster, or undefined when there is none of that name (a cluster run without the operator). */
export async function readDatabaseCluster(kubeConfig: k8s.KubeConfig, namespace: string, name: string): Promise<DatabaseCluster | undefined> {
  try {
    return (await kubeConfig.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({ group, version, namespace, plural, name })) as DatabaseCluster;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw new UnreachableError(`cannot read DatabaseCluster ${name}: ${describeApiError(error)}`);
  }
}

/** The pod psql should open: the primary, or with `replica` the first ready replica. */
export function podForRole(pods: PodSummary[], replica: boolean): PodSummary | undefined {
  const role = replica ? Roles.replica : Roles.primary;
  return pods.find((p) => p.role === role && p.ready) ?? pods.find((p) => p.role === role);
}
