import type { MemberRecord } from './types.js';

/**
 * When a member record needs a write. Readers use what a member reports (role, state, WAL
 * positions, tags, addresses), not when it last said so, except the leader's slot upkeep, which
 * drops the slot of a member silent for member_slots_ttl. So a record is written when it changed,
 * and otherwise only often enough that a live member never looks silent.
 */

/** Patroni's member_slots_ttl default: how long a silent member keeps its replication slot. */
export const MEMBER_SLOTS_TTL_MS = 30 * 60 * 1000;

/** An unchanged record is rewritten this often: three chances within member_slots_ttl. */
export const MEMBER_REFRESH_MS = MEMBER_SLOTS_TTL_MS / 3;

/** The record as JSON without its heartbeat (and without undefined fields, as stored). */
function contentOf(record: MemberRecord): string {
  const { heartbeat: _heartbeat, ...rest } = record;
  return JSON.stringify(rest);
}

/** Whether `next` must be written over the stored record (undefined: none stored). */
export function memberWriteNeeded(stored: MemberRecord | undefined, next: MemberRecord, refreshMs = MEMBER_REFRESH_MS): boolean {
  if (!stored || typeof stored.heartbeat !== 'number') return true;
  if (next.heartbeat - stored.heartbeat >= refreshMs) return true;
  return contentOf(stored) !== contentOf(JSON.parse(JSON.stringify(next)) as MemberRecord);
}
