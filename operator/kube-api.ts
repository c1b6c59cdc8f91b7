import {
  ApisApi,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1Lease,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from '@kubernetes/client-node';
import { apiStatusCode } from '../lib/kube/client.js';
import { ObjectApi } from '../lib/kube/object-api.js';
import { backupKind, backupPlural } from '../api/crd/backup-kind.js';
import { group, kind, plural, version } from '../api/crd/types.js';
import { databaseKind, databasePlural } from '../api/crd/database-kind.js';
import { capabilitiesFrom, modernCapabilities, type ServerCapabilities } from './capabilities.js';
import { FieldManager } from '../api/naming.js';
import type { ReadCache } from './read-cache.js';

/** A DatabaseCluster (or a Backup) as read from the API server, before parsing. */
export interface RawCluster extends KubernetesObject {
  spec?: unknown;
  status?: Record<string, unknown>;
}

/** The name of a DatabaseCluster as the read cache looks it up. */
export function clusterHeader(namespace: string, name: string): KubernetesObject {
  return { apiVersion: `${group}/${version}`, kind, metadata: { namespace, name } };
}

/**
 * The Kubernetes calls the reconciler makes, in one place. Reads and writes go through client-node
 * unmodified so the same code runs against a real API server and the local stand-in. Once a
 * controller hands it its watch caches (useCache), reads are served from them and writes are
 * remembered there until the watch brings them (operator/read-cache.ts).
 */
export class OperatorKubeApi {
  readonly objects: ObjectApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  private readonly apis: ApisApi;
  private readonly discovery: DiscoveryV1Api;
  private capabilitiesCache?: { value: ServerCapabilities; at: number };
  private cache?: ReadCache;

  constructor(readonly kubeConfig: KubeConfig) {
    this.objects = ObjectApi.make(kubeConfig);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.apis = kubeConfig.makeApiClient(ApisApi);
    this.discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
  }

  /**
   * The addresses a Service routes to now: the ready endpoints of its EndpointSlices (what
   * kube-proxy reads). Undefined on a server without discovery.k8s.io/v1 (before Kubernetes 1.21).
   */
  async routedAddresses(namespace: string, service: string): Promise<string[] | undefined> {
    try {
      const slices = await this.discovery.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
      return slices.items.flatMap((slice) => (slice.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses));
    } catch (error) {
      if (apiStatusCode(error) === 404) return undefined;
      throw error;
    }
  }

  /** Serves reads from these watch caches from now on (undefined: always ask the server). */
  useCache(cache: ReadCache | undefined): void {
    this.cache = cache;
  }

  async read<T extends KubernetesObject>(object: T): Promise<T | undefined> {
    const cached = this.cache?.get<T>(object);
    if (cached) return cached;
    return this.readLive(object);
  }

  /** The object as the server has it now, or undefined when it does not exist. */
  private async readLive<T extends KubernetesObject>(object: T): Promise<T | undefined> {
    try {
      const header = { apiVersion: object.apiVersion!, kind: object.kind!, metadata: { name: object.metadata!.name!, namespace: object.metadata!.namespace! } };
      return (await this.objects.read<T>(header)) as T;
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }

  async create<T extends KubernetesObject>(object: T): Promise<T> {
    return this.remembered(await this.objects.create<T>(object, undefined, undefined, FieldManager));
  }

  async replace<T extends KubernetesObject>(object: T): Promise<T> {
    return this.remembered(await this.objects.replace<T>(object, undefined, undefined, FieldManager));
  }

  private remembered<T extends KubernetesObject>(stored: T): T {
    this.cache?.remember(stored);
    return stored;
  }

  /**
   * Deletes (dependents in the background). The watch cache then holds what the server has left:
   * nothing, or the object still terminating (a pod until its kubelet is done, anything a finalizer
   * holds). Dropping a terminating pod would hide a member that still runs, and the watch brings
   * no further event for it until it is gone.
   */
  async delete(object: KubernetesObject): Promise<void> {
    try {
      await this.objects.delete(object, undefined, undefined, undefined, undefined, 'Background');
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw err;
    }
    if (!this.cache) return;
    const left = await this.readLive(object);
    if (left) this.cache.remember(left);
    else this.cache.forget(object);
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    return this.cache?.list<V1Pod>('v1', 'Pod', namespace, labelSelector) ?? (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  /** Objects of one kind in a namespace matching an equality selector (from the watch cache when it covers the kind). */
  async listObjects<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string, labelSelector: string): Promise<T[]> {
    const cached = this.cache?.list<T>(apiVersion, kind, namespace, labelSelector);
    return cached ?? (await this.objects.list<T>(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, labelSelector)).items;
  }

  async listClaims(namespace: string, labelSelector: string): Promise<V1PersistentVolumeClaim[]> {
    const cached = this.cache?.list<V1PersistentVolumeClaim>('v1', 'PersistentVolumeClaim', namespace, labelSelector);
    return cached ?? (await this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector })).items;
  }

  async listLeases(namespace: string): Promise<V1Lease[]> {
    return (await this.coordination.listNamespacedLease({ namespace })).items;
  }

  /** A cluster's leader Lease (ha-node's), or undefined when there is none. */
  async readLeaderLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    // ha-node creates and renews the leader Lease, never this operator: once the watch has synced,
    // a Lease it does not hold does not exist yet (its creation event will bring a pass).
    const cached = this.cache?.lookup<V1Lease>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace, name } });
    if (cached?.covered) return cached.object;
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

  /** `resourceVersion` '' (default): the latest state; a version: a list no older than it (the server's watch cache). */
  async listClusters(namespace?: string, resourceVersion = ''): Promise<{ items: RawCluster[]; resourceVersion: string }> {
    const at = resourceVersion ? { resourceVersion } : {};
    const list = (
      namespace
        ? await this.custom.listNamespacedCustomObject({ group, version, namespace, plural, ...at })
        : await this.custom.listClusterCustomObject({ group, version, plural, ...at })
    ) as { items: RawCluster[]; metadata?: { resourceVersion?: string } };
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  async readCluster(namespace: string, name: string): Promise<RawCluster | undefined> {
    const cached = this.cache?.get<RawCluster>(clusterHeader(namespace, name));
    if (cached) return cached;
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
    return this.remembered((await this.custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name, body: cluster })) as RawCluster);
  }

  /** Replaces the status subresource; CAS on resourceVersion. */
  async replaceClusterStatus(cluster: RawCluster): Promise<RawCluster> {
    const { namespace, name } = cluster.metadata as { namespace: string; name: string };
    return this.remembered((await this.custom.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural, name, body: cluster })) as RawCluster);
  }

  /** Backup objects of a namespace (every cluster's: a Backup names its cluster in spec), from the watch cache when it is synced. */
  async listBackups(namespace: string): Promise<RawCluster[]> {
    const cached = this.cache?.all<RawCluster>(`${group}/${version}`, backupKind, namespace);
    if (cached) return cached;
    return (await this.listBackupsLive(namespace)).items;
  }

  /** The API server's list (the watch's relist; all namespaces without one). */
  async listBackupsLive(namespace?: string): Promise<{ items: RawCluster[]; resourceVersion: string }> {
    const list = (
      namespace
        ? await this.custom.listNamespacedCustomObject({ group, version, namespace, plural: backupPlural })
        : await this.custom.listClusterCustomObject({ group, version, plural: backupPlural })
    ) as { items: RawCluster[]; metadata?: { resourceVersion?: string } };
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  /** Database objects of a namespace, from the watch cache when it is synced. */
  async listDatabases(namespace: string): Promise<RawCluster[]> {
    return this.cache?.all<RawCluster>(`${group}/${version}`, databaseKind, namespace) ?? (await this.listDatabasesLive(namespace)).items;
  }

  async listDatabasesLive(namespace?: string): Promise<{ items: RawCluster[]; resourceVersion: string }> {
    const list = (
      namespace
        ? await this.custom.listNamespacedCustomObject({ group, version, namespace, plural: databasePlural })
        : await this.custom.listClusterCustomObject({ group, version, plural: databasePlural })
    ) as { items: RawCluster[]; metadata?: { resourceVersion?: string } };
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  /** Replaces a Database (its finalizers); CAS on resourceVersion. */
  async replaceDatabase(object: RawCluster): Promise<RawCluster> {
    const { namespace, name } = object.metadata as { namespace: string; name: string };
    return this.remembered(
      (await this.custom.replaceNamespacedCustomObject({ group, version, namespace, plural: databasePlural, name, body: object })) as RawCluster,
    );
  }

  async replaceDatabaseStatus(object: RawCluster): Promise<RawCluster> {
    const { namespace, name } = object.metadata as { namespace: string; name: string };
    return this.remembered(
      (await this.custom.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural: databasePlural, name, body: object })) as RawCluster,
    );
  }

  async createBackup(namespace: string, body: RawCluster): Promise<RawCluster> {
    return this.remembered((await this.custom.createNamespacedCustomObject({ group, version, namespace, plural: backupPlural, body })) as RawCluster);
  }

  /** Replaces a Backup's status subresource; CAS on resourceVersion. */
  async replaceBackupStatus(backup: RawCluster): Promise<RawCluster> {
    const { namespace, name } = backup.metadata as { namespace: string; name: string };
    return this.remembered(
      (await this.custom.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural: backupPlural, name, body: backup })) as RawCluster,
    );
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
