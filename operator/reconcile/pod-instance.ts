/**
 * Which pod a member's facts belong to. A StatefulSet replaces a deleted pod under the same name,
 * while the leader Lease and ha-node's member record (GET /cluster) still describe the pod that
 * is gone: a replacement that never started (Pending: unschedulable, pulling, waiting for its
 * volume) must not show the old pod's role and state, nor one that started before its ha-node
 * wrote a record of its own. A record is the pod's own when its address is the pod's.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { HaClusterMember } from '../hanode-client.js';

/** Whether a container of this pod has run (phase past Pending, or a container running or ended). */
export function hasStarted(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Running' || phase === 'Succeeded' || phase === 'Failed') return true;
  return (pod.status?.containerStatuses ?? []).some(
    (c) => c.state?.running !== undefined || c.state?.terminated !== undefined || c.lastState?.terminated !== undefined,
  );
}

/**
 * ha-node's record of the member, when it describes this pod: the pod has started and the
 * record's host is the pod's IP (a record without a host is taken as it is).
 */
export function recordOfPod(pod: V1Pod, record: HaClusterMember | undefined): HaClusterMember | undefined {
  if (!record || !hasStarted(pod)) return undefined;
  if (record.host !== undefined && record.host !== pod.status?.podIP) return undefined;
  return record;
}
