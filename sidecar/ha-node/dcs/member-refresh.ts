import type { MemberRecord } from './types.js';

/**
 * When a member record needs a write. Readers use what a member reports (role, state, WAL
 * positions, tags, addresses), not when it last said so, except the leader's slot upkeep, which
 * drops the slot of a member silent for member_slots_ttl. So a record is written when it changed,
 * and otherwise only often enough that a live member never looks silent.
 *
 * The lock holder's WAL position is also the `optime` its every renewal writes to the leader
 * Lease, and every reader of the holder's position takes the newer of the two (eligibility,
 * GET /cluster lag). So for the holder's record a moved position alone is no change: that would
 * be a second write for what the renewal of the same cycle already published.
 */

/** Patroni's member_slots_ttl default: how long a silent member keeps its replication slot. */
export const MEMBER_SLOTS_TTL_MS = 30 * 60 * 1000;

/** An unchanged record is rewritten this often: three chances within member_slots_ttl. */
export const MEMBER_REFRESH_MS = MEMBER_SLOTS_TTL_MS / 3;

/** The record as JSON without its heartbeat (and without undefined fields, as stored); without its position when the lock carries it. */
function contentOf(record: MemberRecord, positionInLock: boolean): string {
  const { heartbeat: _heartbeat, xlog_location: position, ...rest } = record;
  return JSON.stringify(positionInLock ? rest : { ...rest, xlog_location: position });
}

/** Roles whose renewal writes the WAL position as the leader Lease's optime (leader-duties, standby-duties). */
const positionPublishingRoles = new Set(['primary', 'standby_leader']);

/** Whether this member's renewals publish its WAL position: it holds the lock and renews as primary or standby leader. */
export function positionInLock(record: MemberRecord, holdsLock: boolean): boolean {
  return holdsLock && positionPublishingRoles.has(record.role);
}

/**
 * Whether `next` must be written over the stored record (undefined: none stored).
 * `lockCarriesPosition`: see positionInLock (then a moved xlog_location alone is no change).
 */
export function memberWriteNeeded(stored: MemberRecord | undefined, next: MemberRecord, lockCarriesPosition = false, refreshMs = MEMBER_REFRESH_MS): boolean {
  if (!stored || typeof stored.heartbeat !== 'number') return true;
  if (next.heartbeat - stored.heartbeat >= refreshMs) return true;
  // Both sides compared as stored (JSON drops undefined fields); the position only when the lock does not carry it.
  const ignorePosition = lockCarriesPosition && positionInLock(stored, true);
  return contentOf(stored, ignorePosition) !== contentOf(JSON.parse(JSON.stringify(next)) as MemberRecord, ignorePosition);
}
