import type { MemberRecord } from '../../dcs/types.js';
import type { PeerReport } from './election.js';
import { isTrue } from '../settings.js';
import { callPeer, type PeerApiTls } from '../peer-api.js';

interface PeerDocument {
  role?: string;
  state?: string;
  timeline?: number;
  xlog?: { location?: number; received_location?: number; replayed_location?: number };
  tags?: Record<string, unknown>;
  disk_full?: boolean;
}

/** Reads one member's node document (GET <api_url>); unreachable within the timeout means not a candidate. */
export async function askPeer(member: MemberRecord, timeoutMs: number, tls?: PeerApiTls): Promise<PeerReport> {
  try {
    const answer = await callPeer(member, member.api_url, { timeoutMs }, tls);
    const doc = JSON.parse(answer.body) as PeerDocument;
    const xlog = doc.xlog ?? {};
    const walPosition = xlog.location ?? Math.max(xlog.received_location ?? 0, xlog.replayed_location ?? 0);
    return {
      name: member.name,
      reachable: true,
      role: doc.role,
      state: doc.state,
      walPosition,
      timeline: doc.timeline,
      nofailover: isTrue(doc.tags?.nofailover),
      diskFull: doc.disk_full === true,
    };
  } catch {
    return { name: member.name, reachable: false };
  }
}

export function askPeers(members: MemberRecord[], timeoutMs = 2000, tls?: PeerApiTls): Promise<PeerReport[]> {
  return Promise.all(members.map((m) => askPeer(m, timeoutMs, tls)));
}
