import { apiStatusCode, describeApiError } from '../../lib/kube/client.js';
import type { Condition, DatabaseClusterStatus } from '../../api/crd/types.js';
import type { EventTarget } from '../events.js';
import type { ReconcileDeps } from './deps.js';

/**
 * Build-time refusals: a builder that cannot produce an object for this spec, or an API server
 * that refuses an object the operator writes (400, 403, 422). Retrying cannot help until the spec
 * or the cluster changes, so a refusal is shown where users look (condition Applied=False with
 * the server's message, and a Warning Event), not only in the operator's log.
 */

/** Condition type: True once every owned object was written, False with the refusal otherwise. */
export const AppliedCondition = 'Applied';
export const RefusedReason = 'Refused';

/** A builder's refusal: the spec asks for an object that cannot be built. */
export class BuildRefusedError extends Error {
  constructor(message: string) {
    super(`build: ${message}`);
    this.name = 'BuildRefusedError';
  }
}

export function isRefusal(err: unknown): boolean {
  if (err instanceof BuildRefusedError) return true;
  const code = apiStatusCode(err);
  return code === 400 || code === 403 || code === 422;
}

/** Runs a builder; what it throws becomes a BuildRefusedError. */
export function build<T>(what: () => T): T {
  try {
    return what();
  } catch (err) {
    throw new BuildRefusedError(err instanceof Error ? err.message : String(err));
  }
}

/** The refusal as users read it; the server's message names the kind, the object and the field. */
export function describeRefusal(err: unknown): string {
  return err instanceof BuildRefusedError ? err.message : describeApiError(err);
}

/** The stored status with condition Applied=False; phase Pending when nothing was reported yet. */
export function refusedStatus(previous: DatabaseClusterStatus | undefined, message: string, generation: number | undefined, now: Date): DatabaseClusterStatus {
  const conditions = previous?.conditions ?? [];
  const old = conditions.find((c) => c.type === AppliedCondition);
  const lastTransitionTime = old?.status === 'False' ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const applied: Condition = { type: AppliedCondition, status: 'False', reason: RefusedReason, message, lastTransitionTime, observedGeneration: generation };
  return {
    ...previous,
    phase: previous?.phase ?? 'Pending',
    conditions: [...conditions.filter((c) => c.type !== AppliedCondition), applied],
  };
}

/** One Warning Event per new refusal message (a refusal repeated on every pass is one Event). */
export async function reportRefusal(deps: ReconcileDeps, target: EventTarget, previous: DatabaseClusterStatus | undefined, message: string): Promise<void> {
  const old = previous?.conditions?.find((c) => c.type === AppliedCondition);
  if (old?.status === 'False' && old.message === message) return;
  deps.logger.warn({ cluster: `${target.namespace}/${target.name}`, refusal: message }, 'object refused');
  await deps.events.record(target, 'Warning', 'ApplyRefused', message);
}
