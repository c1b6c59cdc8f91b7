import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { DatabaseCluster } from '../../api/crd/types.js';
import { commonLabels, defaultImage, Labels, names, ownerReference, PoolerParts, type ClusterNames } from '../../api/naming.js';

/**
 * What the standby leader of a standby cluster follows (resolved from spec.replica.source): an
 * address to stream from, the source's WAL archive in a backup repository, or both.
 */
export interface StandbyTarget {
  host?: string;
  port?: number;
  /** Replay the archive of spec.replica.source.repository (ha-node's standby_cluster.repository). */
  repository?: boolean;
  /** The name the source's certificate carries (a DatabaseCluster source): ha-node's standby_cluster.server_name. */
  serverName?: string;
}

/** What every builder needs: the parsed cluster and the operator's own image (the default). */
export interface BuildContext {
  cluster: DatabaseCluster;
  /** Version of the operator, used for the default image tag. */
  operatorVersion: string;
  /** Set while spec.replica.enabled: the resolved source (reconcile/replica-source.ts). */
  standby?: StandbyTarget;
}

export function clusterNames(ctx: BuildContext): ClusterNames {
  return names(ctx.cluster.metadata.name);
}

export function imageOf(ctx: BuildContext): string {
  return ctx.cluster.spec.image ?? defaultImage(ctx.operatorVersion);
}

/**
 * Metadata of an owned object: namespace, the cluster's labels plus a kind tag, and the controller
 * owner reference (GC removes the object with its DatabaseCluster).
 */
export function ownedMeta(ctx: BuildContext, name: string, component: string, extraLabels: Record<string, string> = {}): V1ObjectMeta {
  return {
    name,
    namespace: ctx.cluster.metadata.namespace,
    labels: { ...commonLabels(ctx.cluster.metadata.name, component), ...extraLabels, [Labels.owned]: component },
    ownerReferences: [ownerReference(ctx.cluster)],
  };
}

/** The label that marks an object as the pooler's (the read-only pooler's with `readOnly`). */
export function poolerPartLabel(readOnly = false): Record<string, string> {
  return { [Labels.pooler]: readOnly ? PoolerParts.readOnly : PoolerParts.readWrite };
}
