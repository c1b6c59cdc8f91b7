/**
 * Which member is the primary. The leader Lease decides, as it does for ha-node: a former
 * primary cut off from the API server keeps its primary label until the new leader takes it off,
 * so labels can name two pods (or none) for a while. Labels answer only when no live Lease names
 * one of the pods (a cluster that is starting, or ha-node outside this namespace).
 */
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { Labels, Roles } from '../../api/naming.js';

/** The holder of an unexpired Lease; undefined when nobody holds it or it ran out. */
export function leaseHolder(lease: V1Lease | undefined, now: Date): string | undefined {
  const holder = lease?.spec?.holderIdentity;
  if (!holder) return undefined;
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  const seconds = lease.spec?.leaseDurationSeconds;
  if (renewed && seconds && new Date(renewed).getTime() + seconds * 1000 < now.getTime()) return undefined;
  return holder;
}

/** The primary: the Lease holder when it is one of the pods, else the one pod labelled primary. */
export function primaryOf(pods: V1Pod[], holder: string | undefined): string | undefined {
  const live = pods.filter((pod) => !pod.metadata?.deletionTimestamp);
  if (holder && live.some((pod) => pod.metadata?.name === holder)) return holder;
  const labelled = live.filter((pod) => pod.metadata?.labels?.[Labels.role] === Roles.primary);
  return labelled.length === 1 ? labelled[0]!.metadata!.name! : undefined;
}
