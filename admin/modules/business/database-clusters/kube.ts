import * as k8s from '@kubernetes/client-node';
import { apiVersion, group, kind, plural, version } from '../../../../api/crd/types.js';
import { databasePlural } from '../../../../api/crd/database-kind.js';
import { Code } from '../../../http/codes.js';
import { BizError } from '../../../http/envelope.js';
import { KubeNotConfiguredError } from '../../../../lib/kube/client.js';

/** Business codes of this module (4000–9999 are reserved for business modules). */
export const ClusterCode = {
  KUBE_UNAVAILABLE: '4001',
  KUBE_REFUSED: '4002',
  KUBE_NOT_CONFIGURED: '4003',
} as const;

/** The raw DatabaseCluster object as the API server returns it. */
export interface DatabaseClusterObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string | Date;
    generation?: number;
    deletionTimestamp?: string | Date;
    labels?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface ClusterApi {
  list(namespace: string | undefined): Promise<DatabaseClusterObject[]>;
  get(namespace: string, name: string): Promise<DatabaseClusterObject>;
  create(namespace: string, name: string, spec: Record<string, unknown>, labels?: Record<string, string>): Promise<DatabaseClusterObject>;
  patchSpec(namespace: string, name: string, spec: Record<string, unknown>): Promise<DatabaseClusterObject>;
  remove(namespace: string, name: string): Promise<void>;
  /** The namespace's Database objects (every cluster's; each names its cluster in spec). */
  databases(namespace: string): Promise<DatabaseClusterObject[]>;
}

interface KubeStatusBody {
  message?: string;
  reason?: string;
}

/** Kubernetes API failures → envelope errors the front end can show. */
export function toBizError(error: unknown, what: string): BizError {
  if (error instanceof k8s.ApiException) {
    let body: KubeStatusBody;
    try {
      body = ((typeof error.body === 'string' ? JSON.parse(error.body) : error.body) ?? {}) as KubeStatusBody;
    } catch {
      body = {};
    }
    const message = body.message ?? `kubernetes answered ${error.code}`;
    if (error.code === 404) return new BizError(Code.NOT_FOUND, `${what} not found`);
    if (error.code === 409) return new BizError(Code.DUPLICATE_RESOURCE, message);
    if (error.code === 400 || error.code === 422) return new BizError(Code.VALIDATION, message);
    if (error.code === 401 || error.code === 403) return new BizError(ClusterCode.KUBE_REFUSED, `kubernetes refused the request: ${message}`);
    return new BizError(ClusterCode.KUBE_UNAVAILABLE, `kubernetes API error ${error.code}: ${message}`);
  }
  if (error instanceof KubeNotConfiguredError) return new BizError(ClusterCode.KUBE_NOT_CONFIGURED, error.message);
  return new BizError(ClusterCode.KUBE_UNAVAILABLE, `kubernetes API unavailable: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * What createClusterApi calls, as RBAC rules: the chart grants the admin's own ServiceAccount
 * exactly these (a test compares them both ways).
 */
export function adminKubeRules(): k8s.V1PolicyRule[] {
  return [
    { apiGroups: [group], resources: [plural], verbs: ['get', 'list', 'create', 'patch', 'delete'] },
    { apiGroups: [group], resources: [databasePlural], verbs: ['list'] },
  ];
}

/** DatabaseCluster access through client-node's CustomObjectsApi. */
export function createClusterApi(kubeConfig: k8s.KubeConfig): ClusterApi {
  const api = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const guard = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw toBizError(error, what);
    }
  };
  return {
    list: (namespace) =>
      guard('clusters', async () => {
        const list = (
          namespace
            ? await api.listNamespacedCustomObject({ group, version, namespace, plural })
            : await api.listClusterCustomObject({ group, version, plural })
        ) as { items?: DatabaseClusterObject[] };
        return list.items ?? [];
      }),
    get: (namespace, name) =>
      guard(
        `cluster ${namespace}/${name}`,
        async () => (await api.getNamespacedCustomObject({ group, version, namespace, plural, name })) as DatabaseClusterObject,
      ),
    create: (namespace, name, spec, labels) =>
      guard(
        `cluster ${namespace}/${name}`,
        async () =>
          (await api.createNamespacedCustomObject({
            group,
            version,
            namespace,
            plural,
            body: { apiVersion, kind, metadata: { name, namespace, labels }, spec },
          })) as DatabaseClusterObject,
      ),
    patchSpec: (namespace, name, spec) =>
      guard(
        `cluster ${namespace}/${name}`,
        async () => (await api.patchNamespacedCustomObject({ group, version, namespace, plural, name, body: { spec } }, mergePatch)) as DatabaseClusterObject,
      ),
    databases: (namespace) =>
      guard(
        'databases',
        async () =>
          ((await api.listNamespacedCustomObject({ group, version, namespace, plural: databasePlural })) as { items?: DatabaseClusterObject[] }).items ?? [],
      ),
    remove: (namespace, name) =>
      guard(`cluster ${namespace}/${name}`, async () => {
        await api.deleteNamespacedCustomObject({ group, version, namespace, plural, name, propagationPolicy: 'Background' });
      }),
  };
}
