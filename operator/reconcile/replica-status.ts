import type { ReplicaStatus } from '../../api/crd/replica-types.js';
import type { Condition, DatabaseCluster } from '../../api/crd/types.js';
import type { HaClusterMember } from '../hanode-client.js';
import { transientSteps, type RolePlan } from './replica-role.js';

/**
 * status.replica, the RoleChange condition and the Events of each step, pure. Lag and the
 * source's timeline come from the /cluster document the pass reads anyway (the standby leader
 * publishes them in its member record), so showing them costs no request.
 */

export const RoleChangeCondition = 'RoleChange';

export interface RoleEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface ReplicaStatusResult {
  status?: ReplicaStatus;
  condition?: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;
  events: RoleEvent[];
}

const stamp = (now: Date): string => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The database system identifier the cluster's lock holder reports. */
export function systemIdentifierOf(members: HaClusterMember[] | undefined): string | undefined {
  const holder = members?.find((m) => m.role === 'leader' || m.role === 'standby_leader');
  return holder?.system_identifier ?? members?.find((m) => m.system_identifier)?.system_identifier;
}

function demotionOf(members: HaClusterMember[] | undefined, previous: ReplicaStatus['demotion']): ReplicaStatus['demotion'] {
  const d = members?.find((m) => m.standby_demotion)?.standby_demotion;
  if (!d) return previous;
  const systemIdentifier = d.system_identifier ?? d.database_system_identifier ?? previous?.systemIdentifier ?? '';
  return { systemIdentifier, timeline: d.timeline, checkpointLsn: d.checkpoint_lsn, at: d.at };
}

/** The condition with its transition time kept while its status stays. */
export function stampCondition(
  condition: NonNullable<ReplicaStatusResult['condition']>,
  previous: Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): Condition {
  const old = previous?.find((c) => c.type === condition.type);
  const lastTransitionTime = old && old.status === condition.status ? old.lastTransitionTime : stamp(now);
  return { ...condition, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

export function replicaStatusOf(
  cluster: DatabaseCluster,
  source: string | undefined,
  plan: RolePlan,
  members: HaClusterMember[] | undefined,
  now: Date,
): ReplicaStatusResult {
  const previous = cluster.status?.replica;
  if (!cluster.spec.replica) return { events: [] };
  const status: ReplicaStatus = { role: plan.role };
  if (source) status.source = source;
  if (plan.step) status.step = plan.step;
  if (plan.message) status.message = plan.message;
  const leader = members?.find((m) => m.role === 'standby_leader');
  if (plan.role === 'standby') {
    const lag = typeof leader?.source_lag === 'number' ? leader.source_lag : previous?.lagBytes;
    const timeline = typeof leader?.source_timeline === 'number' ? leader.source_timeline : previous?.sourceTimeline;
    if (lag !== undefined) status.lagBytes = lag;
    if (timeline !== undefined) status.sourceTimeline = timeline;
  }
  const demotion = demotionOf(members, previous?.demotion);
  if (demotion) status.demotion = demotion;
  const promotedNow = plan.step === 'Promoted' && previous?.step !== 'Promoted';
  const promotedAt = promotedNow ? stamp(now) : previous?.promotedAt;
  if (promotedAt) status.promotedAt = promotedAt;

  const events: RoleEvent[] = [];
  if (plan.step && plan.step !== previous?.step) {
    if (plan.step === 'Following' && previous?.step === 'Demoting') {
      events.push({
        type: 'Normal',
        reason: 'Demoted',
        message: `the primary stopped cleanly${demotion ? ` at ${demotion.checkpointLsn} (timeline ${demotion.timeline})` : ''} and follows ${source ?? 'its source'} as standby leader`,
      });
    } else if (plan.step === 'Promoted') {
      events.push({ type: 'Normal', reason: 'Promoted', message: 'the standby cluster was promoted: its leader accepts writes' });
    } else if (plan.step !== 'Following') {
      events.push({ type: 'Normal', reason: plan.step, message: plan.message ?? plan.step });
    }
  }
  const changing = transientSteps.includes(plan.step ?? 'Following');
  const condition = changing
    ? { type: RoleChangeCondition, status: 'True' as const, reason: plan.step!, message: plan.message ?? plan.step! }
    : {
        type: RoleChangeCondition,
        status: 'False' as const,
        reason: plan.role === 'standby' ? 'Standby' : 'Primary',
        message: plan.role === 'standby' ? `following ${source ?? 'the source'}` : 'the cluster accepts writes',
      };
  return { status, condition, events };
}
