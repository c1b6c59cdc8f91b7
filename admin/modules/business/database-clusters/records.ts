import { names } from '../../../../api/naming.js';
import type { DatabaseClusterObject } from './kube.js';

const millis = (value: string | Date | undefined): number | null => (value === undefined ? null : new Date(value).getTime());

/** A cluster as the admin front end lists it: camelCase, flat, identified by namespace and name. */
export function toClusterRecord(object: DatabaseClusterObject): Record<string, unknown> {
  const spec = object.spec ?? {};
  const status = object.status ?? {};
  return {
    id: `${object.metadata.namespace}/${object.metadata.name}`,
    name: object.metadata.name,
    namespace: object.metadata.namespace,
    instances: spec.instances ?? null,
    postgresVersion: spec.postgresVersion ?? null,
    phase: status.phase ?? null,
    readyInstances: status.readyInstances ?? 0,
    currentPrimary: status.currentPrimary ?? null,
    members: membersOf(object),
    createdAt: millis(object.metadata.creationTimestamp),
    deleting: object.metadata.deletionTimestamp !== undefined,
    resourceVersion: object.metadata.resourceVersion ?? null,
  };
}

/** Full detail: the record plus spec, status and conditions as the API server holds them. */
export function toClusterDetail(object: DatabaseClusterObject): Record<string, unknown> {
  return { ...toClusterRecord(object), spec: object.spec ?? {}, status: object.status ?? {}, labels: object.metadata.labels ?? {} };
}

interface MemberView {
  name: string;
  role: string;
  ready: boolean;
  state: string | null;
  lagBytes: number | null;
  timeline: number | null;
}

/** The instances the operator last reported, with role, readiness and replication lag. */
export function membersOf(object: DatabaseClusterObject): MemberView[] {
  const members = object.status?.members;
  if (!Array.isArray(members)) return [];
  return members
    .filter((m): m is Record<string, unknown> => !!m && typeof m === 'object' && typeof (m as Record<string, unknown>).name === 'string')
    .map((m) => ({
      name: m.name as string,
      role: typeof m.role === 'string' ? m.role : 'unknown',
      ready: m.ready === true,
      state: typeof m.state === 'string' ? m.state : null,
      lagBytes: typeof m.lagBytes === 'number' ? m.lagBytes : null,
      timeline: typeof m.timeline === 'number' ? m.timeline : null,
    }));
}

/** Why a switchover to this instance cannot be asked for, or undefined when it can. */
export function switchoverRefusal(object: DatabaseClusterObject, targetInstance: string): string | undefined {
  const members = membersOf(object);
  const primary = object.status?.currentPrimary;
  if (targetInstance === primary) return `${targetInstance} is already the primary`;
  // Before the operator reports members, the instance names are still known from the spec.
  const known = members.length
    ? members.map((m) => m.name)
    : Array.from({ length: Number(object.spec?.instances ?? 0) }, (_, i) => names(object.metadata.name).pod(i));
  if (!known.includes(targetInstance)) return `${targetInstance} is not an instance of ${object.metadata.name} (${known.join(', ') || 'none reported yet'})`;
  const member = members.find((m) => m.name === targetInstance);
  if (member && !member.ready) return `${targetInstance} is not ready`;
  return undefined;
}
