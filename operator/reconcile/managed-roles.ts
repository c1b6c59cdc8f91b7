import type { Condition, DatabaseCluster } from '../../api/crd/types.js';
import { managedRolesHash, type ManagedReport, type ManagedRoleResult } from '../../api/crd/managed-status.js';

/**
 * status.roles, the RolesReconciled condition and the Events of spec.roles, composed from the
 * leader's report (GET /managed). A report made against other roles than the spec's (the
 * dynamic configuration not yet patched, or the leader not yet through a cycle) counts as pending.
 */

export const RolesReconciledCondition = 'RolesReconciled';

const pendingMessage = 'waiting for the leader to apply the roles';

export interface RolesOutcome {
  roles?: ManagedRoleResult[];
  condition?: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;
  events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
  /** Not every role is applied yet (or the report is stale): look again soon. */
  waiting: boolean;
}

export function rolesOutcome(cluster: DatabaseCluster, report: ManagedReport | undefined): RolesOutcome {
  const roles = cluster.spec.roles;
  if (roles.length === 0) return { events: [], waiting: false };
  const previous = new Map((cluster.status?.roles ?? []).map((r) => [r.name, r]));
  const fresh = report !== undefined && report.rolesHash === managedRolesHash(roles);
  if (!fresh) {
    // A standby cluster's leader replays its source: it applies the roles once promoted.
    const standby = cluster.spec.replica?.enabled === true;
    const message = standby ? 'a standby cluster applies the roles once it is promoted' : pendingMessage;
    const kept = roles.map((r) => previous.get(r.name) ?? { name: r.name, applied: false, message });
    return {
      roles: kept,
      condition: { type: RolesReconciledCondition, status: 'Unknown', reason: standby ? 'Standby' : 'Pending', message },
      events: [],
      waiting: !standby,
    };
  }
  const results = roles.map((r) => report.roles.find((x) => x.name === r.name) ?? { name: r.name, applied: false, message: pendingMessage });
  const failed = results.filter((r) => !r.applied);
  const events: RolesOutcome['events'] = failed
    .filter((r) => previous.get(r.name)?.message !== r.message)
    .map((r) => ({ type: 'Warning' as const, reason: 'RoleNotApplied', message: `role "${r.name}": ${r.message ?? 'not applied'}` }));
  const wasReconciled = cluster.status?.conditions?.find((c) => c.type === RolesReconciledCondition)?.status === 'True';
  if (failed.length === 0 && !wasReconciled) events.push({ type: 'Normal', reason: 'RolesApplied', message: `${results.length} role(s) as the spec says` });
  const condition: RolesOutcome['condition'] =
    failed.length === 0
      ? { type: RolesReconciledCondition, status: 'True', reason: 'Applied', message: `${results.length} role(s) applied` }
      : {
          type: RolesReconciledCondition,
          status: 'False',
          reason: 'NotApplied',
          message: failed
            .map((r) => `${r.name}: ${r.message ?? 'not applied'}`)
            .join('; ')
            .slice(0, 1024),
        };
  return { roles: results, condition, events, waiting: failed.length > 0 };
}
