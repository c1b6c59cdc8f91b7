import {
  ApisApi,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Lease,
  type V1Pod,
} from '@kubernetes/client-node';
import { apiStatusCode } from '../lib/kube/client.js';
import { group, plural, version } from './api/types.js';
import { capabilitiesFrom, modernCapabilities, type ServerCapabilities } from './capabilities.js';
import { FieldManager } from './naming.js';

/** A DatabaseCluster as read from the API server, before parsing. */
export interface RawCluster extends KubernetesObject {
  spec?: unknown;
  status?: Record<string, unknown>;
}

/**
 * The Kubernetes calls the reconciler makes, in one place. Reads and writes go through client-node
 * unmodified so the same code runs against a real API server and the local stand-in.
 */
export class OperatorKubeApi {
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  private readonly apis: ApisApi;
  private capabilitiesCache?: { value: ServerCapabilities; at: number };

  constructor(readonly kubeConfig: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.apis = kubeConfig.makeApiClient(ApisApi);
  }

  async read<T extends KubernetesObject>(object: T): Promise<T | undefined> {
    try {
      const header = { apiVersion: object.apiVersion!, kind: object.kind!, metadata: { name: object.metadata!.name!, namespace: object.metadata!.namespace! } };
      return (await this.objects.read<T>(header)) as T;
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }

  create<T extends KubernetesObject>(object: T): Promise<T> {
    return this.objects.create<T>(object, undefined, undefined, FieldManager);
  }

  replace<T extends KubernetesObject>(object: T): Promise<T> {
    return this.objects.replace<T>(object, undefined, undefined, FieldManager);
  }

  async delete(object: KubernetesObject): Promise<void> {
    try {
      await this.objects.delete(object, undefined, undefined, undefined, undefined, 'Background');
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw err;
    }
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    return (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  async listLeases(namespace: string): Promise<V1Lease[]> {
    return (await this.coordination.listNamespacedLease({ namespace })).items;
  }

  /** One Lease, or undefined when there is none. */
  async readLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }

  async deleteLease(namespace: string, name: string): Promise<void> {
    try {
      await this.coordination.deleteNamespacedLease({ namespace, name });
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw err;
    }
  }

  async listClusters(namespace?: string): Promise<{ items: RawCluster[]; resourceVersion: string }> {
    const list = (namespace
      ? await this.custom.listNamespacedCustomObject({ group, version, namespace, plural })
      : await this.custom.listClusterCustomObject({ group, version, plural })) as { items: RawCluster[]; metadata?: { resourceVersion?: string } };
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  async readCluster(namespace: string, name: string): Promise<RawCluster | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group, version, namespace, plural, name })) as RawCluster;
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }

  /** Replaces the main resource (metadata such as finalizers); CAS on resourceVersion. */
  async replaceCluster(cluster: RawCluster): Promise<RawCluster> {
    const { namespace, name } = cluster.metadata as { namespace: string; name: string };
    return (await this.custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name, body: cluster })) as RawCluster;
  }

  /** Replaces the status subresource; CAS on resourceVersion. */
  async replaceClusterStatus(cluster: RawCluster): Promise<RawCluster> {
    const { namespace, name } = cluster.metadata as { namespace: string; name: string };
    return (await this.custom.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural, name, body: cluster })) as RawCluster;
  }

  /**
   * What the server serves, from `/apis` discovery (readable by every authenticated user, so no
   * extra RBAC). Cached for a minute when everything is served; while something is missing it is
   * looked up again after 5 s, so a CRD installed later (ServiceMonitor) is picked up soon.
   */
  async capabilities(): Promise<ServerCapabilities> {
    const cached = this.capabilitiesCache;
    const complete = cached && cached.value.podDisruptionBudget === modernCapabilities.podDisruptionBudget && cached.value.serviceMonitor;
    if (cached && Date.now() - cached.at < (complete ? 60_000 : 5_000)) return cached.value;
    const value = capabilitiesFrom(await this.apis.getAPIVersions());
    this.capabilitiesCache = { value, at: Date.now() };
    return value;
  }
}
