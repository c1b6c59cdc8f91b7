import {
  ApiextensionsV1Api,
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
  private readonly extensions: ApiextensionsV1Api;
  private crdCache = new Map<string, { present: boolean; at: number }>();

  constructor(readonly kubeConfig: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
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

  /** Whether a CRD is installed (cached for a minute: discovery is not free). */
  async crdExists(name: string): Promise<boolean> {
    const cached = this.crdCache.get(name);
    if (cached && Date.now() - cached.at < 60_000) return cached.present;
    let present = true;
    try {
      await this.extensions.readCustomResourceDefinition({ name });
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw err;
      present = false;
    }
    this.crdCache.set(name, { present, at: Date.now() });
    return present;
  }
}
