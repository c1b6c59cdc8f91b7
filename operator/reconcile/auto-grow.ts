import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { apiStatusCode, describeApiError } from '../../lib/kube/client.js';
import { quantityBytes } from '../../api/crd/quantity.js';
import type { AutoGrow, VolumeUsageStatus } from '../../api/crd/storage-types.js';
import type { Condition, DatabaseCluster } from '../../api/crd/types.js';
import type { HaClusterMember } from '../hanode-client.js';
import { memberVolumes } from './volume-usage.js';
import { podSelector, selectorString, VolumeNames } from '../../api/naming.js';
import { walVolumeName } from '../builders/wal-volume.js';
import type { ReconcileDeps } from './deps.js';

/**
 * spec.storage.autoGrow: each pass compares the data volume usage every member's ha-node
 * publishes with the threshold and grows the member's claim by the step, up to max (one Event per
 * growth). It works whatever PostgreSQL does: a full volume has stopped the server, and ha-node
 * still reports. A claim is grown again only once its last growth reached the volume and ha-node
 * measured the grown volume. At max, condition VolumeAutoGrow turns False (AtMaximum) with a
 * Warning Event.
 */
export const AutoGrowCondition = 'VolumeAutoGrow';
/** How often a cluster with auto-grow is looked at when nothing else brings a pass. */
export const autoGrowRequeueMs = 5_000;

const mi = 1024 * 1024;

export type AutoGrowStep =
  | { kind: 'grow'; claim: V1PersistentVolumeClaim; from: string; to: string; usage: VolumeUsageStatus }
  | { kind: 'atMax'; claim: V1PersistentVolumeClaim; usage: VolumeUsageStatus };

const requestOf = (claim: V1PersistentVolumeClaim): number | undefined => quantityBytes(claim.spec?.resources?.requests?.storage as string | undefined);
const capacityOf = (claim: V1PersistentVolumeClaim): number | undefined => quantityBytes(claim.status?.capacity?.storage as string | undefined);

/** The size after one step from `current` bytes, at most max, in whole MiB. */
export function nextSize(current: number, policy: Pick<AutoGrow, 'step' | 'max'>): number {
  const max = quantityBytes(policy.max) ?? current;
  const step = policy.step.endsWith('%') ? (current * Number(policy.step.slice(0, -1))) / 100 : (quantityBytes(policy.step) ?? 0);
  return Math.min(max, Math.ceil((current + Math.max(step, mi)) / mi) * mi);
}

/** A claim whose last growth has not reached its volume, or whose usage was measured before it did. */
function settling(claim: V1PersistentVolumeClaim, usage: VolumeUsageStatus): boolean {
  const requested = requestOf(claim);
  const capacity = capacityOf(claim);
  if (requested === undefined || capacity === undefined || capacity < requested) return true;
  if ((claim.status?.conditions ?? []).some((c) => c.status === 'True')) return true;
  // A filesystem shows a little less than its device (ext4's metadata); a report far below is older than the growth.
  return usage.capacityBytes < capacity * 0.85;
}

/** Which claims a policy grows: the data claims (storage.autoGrow) or the WAL claims (walStorage.autoGrow). */
export interface GrownVolume {
  volume: 'data' | 'wal';
  claimPrefix: string;
}
const dataVolume: GrownVolume = { volume: 'data', claimPrefix: VolumeNames.data };
const walVolume: GrownVolume = { volume: 'wal', claimPrefix: walVolumeName };

/** What auto-grow does this pass: pure, from the claims and the members' reports. */
export function planAutoGrow(
  policy: AutoGrow | undefined,
  claims: V1PersistentVolumeClaim[],
  members: HaClusterMember[] | undefined,
  target: GrownVolume = dataVolume,
): AutoGrowStep[] {
  if (!policy || !members) return [];
  const byName = new Map(claims.map((c) => [c.metadata?.name, c]));
  const max = quantityBytes(policy.max) ?? 0;
  const steps: AutoGrowStep[] = [];
  for (const member of members) {
    const usage = memberVolumes(member)?.find((v) => v.volume === target.volume);
    const claim = byName.get(`${target.claimPrefix}-${member.name}`);
    if (!usage || !claim || claim.status?.phase !== 'Bound' || usage.capacityBytes <= 0) continue;
    if (usage.usedBytes / usage.capacityBytes < policy.threshold / 100 || settling(claim, usage)) continue;
    const current = requestOf(claim)!;
    if (current >= max) steps.push({ kind: 'atMax', claim, usage });
    else steps.push({ kind: 'grow', claim, from: String(claim.spec?.resources?.requests?.storage), to: `${nextSize(current, policy) / mi}Mi`, usage });
  }
  return steps;
}

const percent = (usage: VolumeUsageStatus): string => `${Math.round((usage.usedBytes / usage.capacityBytes) * 100)}%`;

/** Carries out the plan; returns condition VolumeAutoGrow (undefined without auto-grow). */
export async function autoGrowVolumes(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  members: HaClusterMember[] | undefined,
): Promise<Omit<Condition, 'lastTransitionTime'> | undefined> {
  const policies = [
    { policy: cluster.spec.storage.autoGrow, target: dataVolume, field: 'storage' },
    { policy: cluster.spec.walStorage?.autoGrow, target: walVolume, field: 'walStorage' },
  ].filter((p): p is { policy: AutoGrow; target: GrownVolume; field: string } => p.policy !== undefined);
  if (policies.length === 0) return undefined;
  const { name, namespace } = cluster.metadata;
  const claims = await deps.api.listClaims(namespace, selectorString(podSelector(name)));
  const steps = policies.flatMap(({ policy, target, field }) =>
    planAutoGrow(policy, claims, members, target).map((step) => ({ ...step, policy, field, volume: target.volume })),
  );
  const previous = cluster.status?.conditions?.find((c) => c.type === AutoGrowCondition);
  for (const step of steps) {
    const claimName = step.claim.metadata!.name!;
    if (step.kind === 'atMax') continue;
    deps.recordWrite('PersistentVolumeClaim', 'update');
    step.claim.spec!.resources = { ...step.claim.spec!.resources, requests: { ...step.claim.spec!.resources?.requests, storage: step.to } };
    try {
      await deps.api.core.replaceNamespacedPersistentVolumeClaim({ namespace, name: claimName, body: step.claim });
    } catch (err) {
      if (apiStatusCode(err) === 409) continue; // changed meanwhile: the next pass decides again
      if (apiStatusCode(err) !== 403 && apiStatusCode(err) !== 422) throw err;
      await deps.events.record(cluster.metadata, 'Warning', 'VolumeResizeRefused', `${claimName}: ${describeApiError(err)}`);
      continue;
    }
    await deps.events.record(
      cluster.metadata,
      'Normal',
      'VolumeAutoGrow',
      `${claimName} ${step.from} → ${step.to}: ${step.volume} volume ${percent(step.usage)} used (threshold ${step.policy.threshold}%)`,
    );
  }
  const atMax = steps.filter((s) => s.kind === 'atMax');
  if (atMax.length > 0) {
    const message = `${atMax.map((s) => `${s.claim.metadata!.name} (${percent(s.usage)} used) reached ${s.field}.autoGrow.max ${s.policy.max}`).join(', ')}: raise it or free space`;
    if (previous?.status !== 'False') await deps.events.record(cluster.metadata, 'Warning', 'VolumeAutoGrowAtMaximum', message);
    return { type: AutoGrowCondition, status: 'False', reason: 'AtMaximum', message };
  }
  const growing = steps.filter((s) => s.kind === 'grow');
  if (growing.length > 0)
    return {
      type: AutoGrowCondition,
      status: 'True',
      reason: 'Grown',
      message: growing.map((s) => `${s.claim.metadata!.name} → ${s.kind === 'grow' ? s.to : ''}`).join(', '),
    };
  // Keep the last growth's word until something changes (a pass without a step says nothing new).
  if (previous?.status === 'True') return { type: AutoGrowCondition, status: 'True', reason: previous.reason, message: previous.message };
  return { type: AutoGrowCondition, status: 'True', reason: 'BelowThreshold', message: 'every volume with auto-grow is below its threshold, or grows now' };
}
