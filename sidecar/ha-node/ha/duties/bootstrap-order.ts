/**
 * Which member creates a new cluster. Pods start in parallel (the StatefulSet's Parallel policy),
 * so any member may reach the initialize key first; ordinal 0 is given a head start so a new
 * cluster's first primary is `<scope>-0`, as users and docs expect, without making the others
 * wait on it for good: after the grace they race as before (the key is a CAS, one member wins).
 */

/** How long the other members leave the initialize key to `<scope>-0` after their own start. */
export const bootstrapGraceMs = 10_000;

/** The member a new cluster prefers as its first primary. */
export function preferredBootstrapMember(scope: string): string {
  return `${scope}-0`;
}

/** Why this member leaves bootstrap to another for now, or undefined when it may race for the key. */
export function bootstrapDeferral(name: string, scope: string, msSinceStart: number, graceMs = bootstrapGraceMs): string | undefined {
  const preferred = preferredBootstrapMember(scope);
  if (name === preferred || msSinceStart >= graceMs) return undefined;
  return `waiting: ${preferred} bootstraps a new cluster first (${Math.ceil((graceMs - msSinceStart) / 1000)} s left)`;
}
