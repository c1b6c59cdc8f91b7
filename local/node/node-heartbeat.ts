/**
 * The node's heartbeat, as a kubelet sends it every 10 s: the Node object's status (Ready) and its
 * Lease in `kube-node-lease` (holder = node name, 40 s duration, owned by the Node), which the
 * node lifecycle controller reads.
 */
import { availableParallelism, totalmem } from 'node:os';
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { isConflict, isNotFound, mergePatch } from '../controllers/kube.js';
import { kubeTime } from './time.js';

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
    const body = {
      ...desired,
      metadata: {
        ...desired.metadata,
        resourceVersion: existing.metadata?.resourceVersion,
        ownerReferences: desired.metadata?.ownerReferences ?? existing.metadata?.ownerReferences,
      },
    };
    await coordination.replaceNamespacedLease({ name: nodeName, namespace: NodeLeaseNamespace, body });
  } catch (err) {
    // A conflict is another renewal racing this one; the next heartbeat settles it.
    if (isConflict(err)) return;
    logger.debug({ node: nodeName, err: (err as Error).message }, 'could not renew the node Lease');
  }
}

/** Creates the Node if needed and refreshes its status; returns its uid (undefined when Nodes are not served). */
export async function registerNode(core: k8s.CoreV1Api, nodeName: string, hostIP: string, logger: Logger): Promise<string | undefined> {
  const now = kubeTime() as unknown as Date;
  const resources = { cpu: String(availableParallelism()), memory: `${Math.floor(totalmem() / 1024)}Ki`, pods: '250' };
  const status: k8s.V1NodeStatus = {
    capacity: resources,
    allocatable: resources,
    addresses: [
      { type: 'InternalIP', address: hostIP },
      { type: 'Hostname', address: nodeName },
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'keelson local node agent is posting ready status',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    nodeInfo: {
      architecture: process.arch === 'x64' ? 'amd64' : process.arch,
      operatingSystem: 'linux',
      kubeletVersion: 'v1.32.0-keelson-local',
      kubeProxyVersion: 'v1.32.0-keelson-local',
      containerRuntimeVersion: 'local://process',
      bootID: '',
      kernelVersion: '',
      machineID: '',
      osImage: 'keelson local',
      systemUUID: '',
    },
  };
  try {
    try {
      await core.createNode({
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux' } } },
      });
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    const node = await core.patchNodeStatus({ name: nodeName, body: { status } }, mergePatch);
    return node.metadata?.uid;
  } catch (err) {
    // The stand-in may not serve Nodes; pods are still run (nodeName is just a string to them).
    logger.debug({ node: nodeName, err: (err as Error).message }, 'could not register the Node object');
    return undefined;
  }
}
