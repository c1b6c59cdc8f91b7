/**
 * The node's heartbeat Lease in `kube-node-lease` (what a kubelet renews every 10 s and the node
 * lifecycle controller reads): holder = node name, 40 s duration, owned by the Node object.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { isConflict, isNotFound } from '../controllers/kube.js';

export const NodeLeaseNamespace = 'kube-node-lease';
export const NodeLeaseDurationSeconds = 40;

/** The Lease body for one renewal; pure. */
export function nodeLease(nodeName: string, now: Date, node?: { uid?: string }): k8s.V1Lease {
  const lease: k8s.V1Lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: nodeName, namespace: NodeLeaseNamespace },
    spec: { holderIdentity: nodeName, leaseDurationSeconds: NodeLeaseDurationSeconds, renewTime: microTime(now) as unknown as Date },
  };
  if (node?.uid) lease.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.uid }];
  return lease;
}

/** `metav1.MicroTime`: RFC 3339 with microseconds. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Creates or renews the Lease (one read, then a create or a PUT with the read resourceVersion). */
export async function renewNodeLease(coordination: k8s.CoordinationV1Api, nodeName: string, nodeUid: string | undefined, logger: Logger): Promise<void> {
  const desired = nodeLease(nodeName, new Date(), { uid: nodeUid });
  try {
    let existing: k8s.V1Lease | undefined;
    try {
      existing = await coordination.readNamespacedLease({ name: nodeName, namespace: NodeLeaseNamespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!existing) {
      await coordination.createNamespacedLease({ namespace: NodeLeaseNamespace, body: desired });
      return;
    }
    const body = { ...desired, metadata: { ...desired.metadata, resourceVersion: existing.metadata?.resourceVersion, ownerReferences: desired.metadata?.ownerReferences ?? existing.metadata?.ownerReferences } };
    await coordination.replaceNamespacedLease({ name: nodeName, namespace: NodeLeaseNamespace, body });
  } catch (err) {
    // A conflict is another renewal racing this one; the next heartbeat settles it.
    if (isConflict(err)) return;
    logger.debug({ node: nodeName, err: (err as Error).message }, 'could not renew the node Lease');
  }
}
