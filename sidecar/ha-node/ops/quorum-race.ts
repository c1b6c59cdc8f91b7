import type { SyncRecord } from '../dcs/types.js';
import type { PeerReport } from '../ha/election/election.js';

export type QuorumVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Quorum mode: may this member take over? Only if it can prove it holds every acknowledged commit:
 * it sees at least quorum + 1 voters (itself included when it is one) and none of them is ahead.
 * The leader that wrote the key holds every commit anyway. Applies to automatic races and to
 * manual failovers alike; outside quorum mode (no quorum in the key) it always agrees.
 */
export function quorumVerdict(self: { name: string; walPosition: number }, sync: SyncRecord | undefined, peers: PeerReport[]): QuorumVerdict {
  if (!sync || sync.quorum === undefined) return { ok: true };
  if (sync.leader === self.name) return { ok: true };
  const voters = new Set(sync.sync_standby);
  const needed = sync.quorum + 1;
  let seen = voters.has(self.name) ? 1 : 0;
  for (const peer of peers) {
    if (peer.name === self.name || !voters.has(peer.name) || !peer.reachable || peer.walPosition === undefined) continue;
    if (peer.walPosition > self.walPosition) return { ok: false, reason: `voter ${peer.name} is ahead (${peer.walPosition} > ${self.walPosition})` };
    seen += 1;
  }
  if (seen < needed) return { ok: false, reason: `quorum not reached: sees ${seen} of the ${needed} voters needed` };
  return { ok: true };
}
