import type { DatabaseClusterStatus } from '../../api/crd/types.js';
import { canonicalJson } from './hash.js';

/** One WAL segment: lag below it is "caught up" for the purpose of rewriting status. */
const lagClassFloorBytes = 16 * 1024 * 1024;

/**
 * Lag in size classes: under one WAL segment, then each doubling. An idle primary still writes a
 * few bytes of WAL (standby snapshots, checkpoints), and a status rewritten for each of them would
 * cost a write per pass on every cluster of a fleet.
 */
export function lagClass(bytes: number): number {
  return bytes < lagClassFloorBytes ? 0 : Math.floor(Math.log2(bytes / lagClassFloorBytes)) + 1;
}

function withLagClasses(status: unknown): unknown {
  if (typeof status !== 'object' || status === null) return status;
  const copy = { ...(status as Record<string, unknown>) };
  if (Array.isArray(copy.members)) {
    copy.members = copy.members.map((member: unknown) => {
      if (typeof member !== 'object' || member === null) return member;
      const { lagBytes, ...rest } = member as Record<string, unknown>;
      return typeof lagBytes === 'number' ? { ...rest, lagClass: lagClass(lagBytes) } : rest;
    });
  }
  if (typeof copy.replica === 'object' && copy.replica !== null) {
    const { lagBytes, ...rest } = copy.replica as Record<string, unknown>;
    copy.replica = typeof lagBytes === 'number' ? { ...rest, lagClass: lagClass(lagBytes) } : rest;
  }
  return copy;
}

/**
 * Whether writing `next` would change anything a reader acts on, so equal statuses cost no write.
 * Lag counts by size class (`lagClass`): the written figure is exact, but a change within its
 * class waits for the next write that happens for another reason.
 */
export function statusDiffers(previous: unknown, next: DatabaseClusterStatus): boolean {
  return canonicalJson(withLagClasses(previous ?? {})) !== canonicalJson(withLagClasses(next));
}
