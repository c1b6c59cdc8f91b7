import type { V1Lease } from '@kubernetes/client-node';
import type { DynamicConfig, FailoverRecord, HistoryEntry, LeaderRecord, MemberRecord, SyncRecord } from './types.js';

/**
 * Pure conversions between Lease objects and DCS records. The leader record uses the Lease spec
 * fields; everything else is JSON or plain strings in annotations, as Patroni keeps them.
 */

export const Label = {
  cluster: 'keelson.io/cluster',
  dcsKey: 'keelson.io/dcs-key',
} as const;

export type DcsKey = 'leader' | 'config' | 'failover' | 'sync' | 'member';

export function leaseName(scope: string, key: Exclude<DcsKey, 'member'>): string {
  return `${scope}-${key}`;
}

/** Member names may hold characters a Lease name cannot; keep it a DNS-1123 subdomain. */
export function memberLeaseName(scope: string, member: string): string {
  return `${scope}-member-${member.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`;
}

function parseJson<T>(text: string | undefined): T | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

function timeString(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : undefined;
}

/** Annotation of the leader lease set by a clean release (see LeaderRecord.releasedCheckpoint). */
export const RELEASED_CHECKPOINT = 'released-checkpoint';
/** Annotation naming the member that made that clean release (the old primary). */
export const RELEASED_BY = 'released-by';

function numberAnnotation(value: string | undefined): number | undefined {
  const number = value === undefined ? undefined : Number(value);
  return number !== undefined && Number.isFinite(number) ? number : undefined;
}

export function leaderFromLease(lease: V1Lease | undefined): LeaderRecord | undefined {
  if (!lease) return undefined;
  const annotations = lease.metadata?.annotations ?? {};
  const optime = numberAnnotation(annotations.optime);
  const holder = lease.spec?.holderIdentity ?? '';
  return {
    holder,
    ttl: lease.spec?.leaseDurationSeconds ?? 30,
    acquireTime: timeString(lease.spec?.acquireTime),
    renewTime: timeString(lease.spec?.renewTime),
    transitions: lease.spec?.leaseTransitions ?? 0,
    optime,
    releasedCheckpoint: holder === '' ? numberAnnotation(annotations[RELEASED_CHECKPOINT]) : undefined,
    releasedBy: holder === '' && annotations[RELEASED_CHECKPOINT] !== undefined ? annotations[RELEASED_BY] : undefined,
    slots: parseJson<Record<string, number>>(annotations.slots),
    failsafe: parseJson<Record<string, string>>(annotations.failsafe),
    resourceVersion: lease.metadata?.resourceVersion,
  };
}

export function configFromLease(lease: V1Lease | undefined): { config?: DynamicConfig; initialize?: string; history: HistoryEntry[] } {
  const annotations = lease?.metadata?.annotations ?? {};
  const history = parseJson<HistoryEntry[]>(annotations.history);
  return {
    config: parseJson<DynamicConfig>(annotations.config),
    initialize: annotations.initialize,
    history: Array.isArray(history) ? history : [],
  };
}

export function failoverFromLease(lease: V1Lease | undefined): FailoverRecord | undefined {
  const a = lease?.metadata?.annotations ?? {};
  if (!a.leader && !a.member && !a.scheduled_at) return undefined;
  return { leader: a.leader || undefined, member: a.member || undefined, scheduled_at: a.scheduled_at || undefined };
}

export function syncFromLease(lease: V1Lease | undefined): SyncRecord | undefined {
  const a = lease?.metadata?.annotations ?? {};
  if (a.leader === undefined) return undefined;
  const quorum = a.quorum === undefined || a.quorum === '' ? undefined : Number(a.quorum);
  return {
    leader: a.leader || undefined,
    sync_standby: (a.sync_standby ?? '').split(',').filter((s) => s.length > 0),
    ...(quorum !== undefined && Number.isInteger(quorum) && quorum >= 0 ? { quorum } : {}),
  };
}

export function memberFromLease(lease: V1Lease): MemberRecord | undefined {
  const record = parseJson<MemberRecord>(lease.metadata?.annotations?.status);
  if (!record || typeof record.name !== 'string') return undefined;
  return { ...record, tags: record.tags ?? {} };
}

export function baseLease(name: string, scope: string, key: DcsKey): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, labels: { [Label.cluster]: scope, [Label.dcsKey]: key }, annotations: {} },
    spec: {},
  };
}

/** A copy of a lease that keeps metadata needed for an update (resourceVersion, labels). */
export function cloneLease(lease: V1Lease): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: lease.metadata?.name,
      namespace: lease.metadata?.namespace,
      resourceVersion: lease.metadata?.resourceVersion,
      labels: { ...(lease.metadata?.labels ?? {}) },
      annotations: { ...(lease.metadata?.annotations ?? {}) },
      ownerReferences: lease.metadata?.ownerReferences,
    },
    spec: { ...(lease.spec ?? {}) },
  };
}
