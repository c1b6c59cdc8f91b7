/**
 * Whether the cluster's Services route to its members, from the pods alone (the watch cache the
 * pass already reads). `<name>-rw` selects the pod labelled primary and `<name>-ro` the pods
 * labelled replica, and a Service's Endpoints hold only Ready pods. ha-node reports a member
 * running as soon as PostgreSQL answers; its pod turns Ready at the next readiness probe and its
 * role label follows ha-node's patch. Until then a client of the Service is refused, so the status
 * counts a member ready only once its Service routes to it (docs/adr/0510), and, while the cluster
 * is not Ready, once `<name>-rw`'s endpoints list the primary.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { MemberStatus } from '../../api/crd/types.js';
import { Labels } from '../../api/naming.js';

export function isPodReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true && !pod.metadata?.deletionTimestamp;
}

/** The one rule: the Service for `role` routes to a pod that is Ready and labelled with that role. */
function servesRole(role: MemberStatus['role'], podReady: boolean, label: string | undefined): boolean {
  return role !== 'unknown' && podReady && label === role;
}

/** Whether the Service for `role` routes to this pod. */
export function routedTo(pod: V1Pod, role: MemberStatus['role']): boolean {
  return servesRole(role, isPodReady(pod), pod.metadata?.labels?.[Labels.role]);
}

/** What status needs of one member to say why it is not served yet. */
export interface ServedMember {
  name: string;
  role: MemberStatus['role'];
  /** ha-node's own state for it (running, streaming, ...), when the primary's /cluster answered. */
  state?: string;
  podReady: boolean;
  /** The pod's keelson.io/role label. */
  label?: string;
  /** The pod's address, as the Service's endpoints list it. */
  podIP?: string;
}

export interface NotServed {
  reason: 'NoPrimary' | 'InstancesNotReady' | 'PodsNotReady' | 'RoleLabelPending' | 'EndpointsPending';
  message: string;
}

/** ha-node's words for a member whose PostgreSQL is up (Patroni's `running`, a replica's `streaming`). */
const upStates = new Set(['running', 'streaming']);

const servedBy = (m: ServedMember): boolean => servesRole(m.role, m.podReady, m.label);

/**
 * Why the Ready condition is False, when it is: no primary; a member missing or down; every
 * member up by ha-node's word but some pod not yet Ready (PodsNotReady); or every pod Ready but
 * some role label not yet matching (RoleLabelPending, e.g. the moment after a promotion).
 * Undefined when every wanted member is served.
 */
export function notServed(
  members: ServedMember[],
  wanted: number,
  primary: string | undefined,
  cluster: string,
  rwRoutes?: readonly string[],
): NotServed | undefined {
  const served = members.filter(servedBy).length;
  const counted = `${served}/${wanted} instances ready`;
  if (primary === undefined) return { reason: 'NoPrimary', message: counted };
  if (served === wanted && members.length === wanted) return rwPending(members, primary, cluster, counted, rwRoutes);
  const waiting = members.filter((m) => !servedBy(m));
  if (members.length !== wanted || waiting.some((m) => !m.podReady && !upStates.has(m.state ?? '')))
    return { reason: 'InstancesNotReady', message: `${counted}, primary ${primary}` };
  const unready = waiting.filter((m) => !m.podReady).map((m) => m.name);
  if (unready.length > 0) {
    return {
      reason: 'PodsNotReady',
      message: `${counted}, primary ${primary}: ${unready.join(', ')} running but the pod is not Ready yet, so ${serviceOf(cluster, waiting)} does not route to it yet`,
    };
  }
  const mislabelled = waiting.map((m) => `${m.name} is ${m.role} but labelled ${m.label ?? 'nothing'}`);
  return {
    reason: 'RoleLabelPending',
    message: `${counted}, primary ${primary}: ${mislabelled.join('; ')} (${serviceOf(cluster, waiting)} follows the label)`,
  };
}

/**
 * The last step to a routable `-rw`: the Endpoints controller publishing the primary's address
 * (read only while the cluster is not Ready, so a steady cluster costs no request).
 */
function rwPending(members: ServedMember[], primary: string, cluster: string, counted: string, rwRoutes?: readonly string[]): NotServed | undefined {
  const address = members.find((m) => m.name === primary)?.podIP;
  if (rwRoutes === undefined || address === undefined || rwRoutes.includes(address)) return undefined;
  return {
    reason: 'EndpointsPending',
    message: `${counted}, primary ${primary}: ${cluster}-rw's endpoints do not list ${primary} (${address}) yet, so it does not route to it yet`,
  };
}

function serviceOf(cluster: string, waiting: ServedMember[]): string {
  const services = new Set(waiting.map((m) => (m.role === 'primary' ? `${cluster}-rw` : `${cluster}-ro`)));
  return [...services].sort().join('/');
}
