import type { KubernetesObject } from '@kubernetes/client-node';
import type { Informer } from '../lib/kube/informer.js';

/**
 * The read layer between the reconciler and the API server: reads served from the controller's
 * watch caches, so a pass over an unchanged cluster sends no request. A hit is trusted (a stale
 * copy makes a write fail its resourceVersion check and the watch event requeues the cluster);
 * a miss is not, because the watch may not have delivered a fresh object yet or the object may
 * lack the label the watch selects on, so the caller reads from the API server instead.
 */

/** A kind the operator owns and watches by the keelson.io/cluster label. */
export interface WatchedKind {
  apiVersion: string;
  kind: string;
  resource: string;
}

/**
 * Every owned kind is watched, PodDisruptionBudgets in the version the server serves; the
 * optional ServiceMonitor is not (its CRD may come and go) and is read live.
 */
export function ownedKinds(pdbApiVersion: string | undefined): WatchedKind[] {
  const pdb = pdbApiVersion ? [{ apiVersion: pdbApiVersion, kind: 'PodDisruptionBudget', resource: 'poddisruptionbudgets' }] : [];
  return [...alwaysOwned, ...pdb];
}

const alwaysOwned: WatchedKind[] = [
  { apiVersion: 'v1', kind: 'Pod', resource: 'pods' },
  { apiVersion: 'v1', kind: 'Service', resource: 'services' },
  { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps' },
  { apiVersion: 'v1', kind: 'Secret', resource: 'secrets' },
  { apiVersion: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', resource: 'statefulsets' },
  { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', resource: 'roles' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', resource: 'rolebindings' },
];

/**
 * The leader Leases ha-node keeps (one per cluster, labelled with its cluster and DCS key). The
 * operator reads the holder on every pass to name the primary; a watch keeps that read local. Its
 * renewals are not a reason for a pass, only a change of holder is (see leaderLeaseChanged).
 */
export const leaderLeases = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', resource: 'leases', selector: 'keelson.io/dcs-key=leader' } as const;

/** Whether a leader Lease event matters to the reconciler: a new holder, or the Lease made or removed. */
export function leaderLeaseChanged(lease: KubernetesObject, previous: KubernetesObject | undefined): boolean {
  const holder = (object: KubernetesObject | undefined) => (object as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
  return !previous || holder(lease) !== holder(previous) || lease.metadata?.deletionTimestamp !== undefined;
}

/**
 * Backup objects are watched whole (a user's Backup carries no label, only spec.cluster): an event
 * wakes the cluster it names, and the pass reads them from the cache instead of a LIST. Only a
 * new, removed or re-phased object matters; the operator's own status writes change the phase.
 */
export function backupChanged(backup: KubernetesObject, previous: KubernetesObject | undefined): boolean {
  const phase = (object: KubernetesObject | undefined) => (object as { status?: { phase?: string } } | undefined)?.status?.phase;
  return !previous || phase(backup) !== phase(previous) || backup.metadata?.deletionTimestamp !== undefined;
}

/** The cluster a Backup belongs to, as a work-queue key. */
export function backupClusterKey(backup: KubernetesObject): string | undefined {
  const cluster = (backup as { spec?: { cluster?: unknown } }).spec?.cluster;
  return typeof cluster === 'string' && backup.metadata?.namespace ? `${backup.metadata.namespace}/${cluster}` : undefined;
}

/** The watch path of a collection, cluster-wide when no namespace is given. */
export function collectionPath(apiVersion: string, resource: string, namespace?: string): string {
  const root = apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`;
  return `${root}${namespace ? `/namespaces/${namespace}` : ''}/${resource}`;
}

/** `k=v,k2=v2` (the only form the reconciler builds) as a map; anything else is not served from cache. */
export function parseEqualitySelector(selector: string): Record<string, string> | undefined {
  const pairs: Record<string, string> = {};
  for (const term of selector.split(',').filter((t) => t.length > 0)) {
    const match = /^([^=!\s]+)=([^=!\s]*)$/.exec(term);
    if (!match) return undefined;
    pairs[match[1]!] = match[2]!;
  }
  return pairs;
}

function matches(object: KubernetesObject, selector: Record<string, string>): boolean {
  const labels = object.metadata?.labels ?? {};
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

interface Scoped {
  namespace?: string;
  informer: Informer<KubernetesObject>;
}

export class ReadCache {
  private readonly byKind = new Map<string, Scoped[]>();

  /** Registers the informer that watches `kind` in `namespace` (undefined: all namespaces). */
  add(apiVersion: string, kind: string, namespace: string | undefined, informer: Informer<KubernetesObject>): void {
    const key = `${apiVersion}/${kind}`;
    this.byKind.set(key, [...(this.byKind.get(key) ?? []), { namespace, informer }]);
  }

  /** The synced informer covering this kind in this namespace, if any. */
  private informerFor(object: KubernetesObject): Informer<KubernetesObject> | undefined {
    const scoped = this.byKind.get(`${object.apiVersion}/${object.kind}`) ?? [];
    const namespace = object.metadata?.namespace;
    const found = scoped.find((s) => s.namespace === undefined || s.namespace === namespace);
    return found?.informer.hasSynced ? found.informer : undefined;
  }

  /** The cached copy of the object named like `object`, or undefined (read it from the server). */
  get<T extends KubernetesObject>(object: KubernetesObject): T | undefined {
    const namespace = object.metadata?.namespace;
    const key = namespace ? `${namespace}/${object.metadata?.name}` : String(object.metadata?.name);
    return this.informerFor(object)?.get(key) as T | undefined;
  }

  /**
   * For kinds whose absence the caller may trust (nothing it creates itself): whether a synced
   * watch covers the object, and the cached copy if there is one.
   */
  lookup<T extends KubernetesObject>(object: KubernetesObject): { covered: boolean; object?: T } {
    const informer = this.informerFor(object);
    if (!informer) return { covered: false };
    const namespace = object.metadata?.namespace;
    const key = namespace ? `${namespace}/${object.metadata?.name}` : String(object.metadata?.name);
    return { covered: true, object: informer.get(key) as T | undefined };
  }

  /** The cached objects of a kind in a namespace matching an equality selector; undefined when not cached. */
  list<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string, selector: string): T[] | undefined {
    const wanted = parseEqualitySelector(selector);
    const informer = this.informerFor({ apiVersion, kind, metadata: { namespace } });
    if (!wanted || !informer) return undefined;
    return informer.list().filter((o) => o.metadata?.namespace === namespace && matches(o, wanted)) as T[];
  }

  /** Every cached object of a kind in a namespace (kinds watched without a selector); undefined when not cached. */
  all<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string): T[] | undefined {
    const informer = this.informerFor({ apiVersion, kind, metadata: { namespace } });
    return informer?.list().filter((o) => o.metadata?.namespace === namespace) as T[] | undefined;
  }

  /** Keeps the result of a write until the watch brings it (see Informer.remember). */
  remember(object: KubernetesObject): void {
    this.informerFor(object)?.remember(object);
  }

  forget(object: KubernetesObject): void {
    this.informerFor(object)?.forget(object);
  }
}
