/**
 * Where a rolling restart's time goes (for bench/time-to-ready.ts): polls every member's ha-node
 * node document (GET /) every 200 ms and notes, per member, when it first reported a pending
 * restart, when PostgreSQL started again (postmaster_start_time changed), when the pending flag
 * cleared, role changes, and when its pod was seen not Ready. The operator's Events (Restarted,
 * Switchover) come from the caller.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { HaNodePaths } from '../lib/ports.js';
import { watchHaNode } from './ha-node-watch.js';

interface NodeDocument {
  role?: string;
  pending_restart?: boolean;
  postmaster_start_time?: string;
}

export interface MemberTimeline {
  pendingSeen?: number;
  restarted?: number;
  pendingCleared?: number;
  notReady?: number;
  readyAgain?: number;
  roles: { role: string; at: number }[];
}

async function nodeDocument(ip: string): Promise<NodeDocument | undefined> {
  const answer = await watchHaNode(ip, HaNodePaths.node);
  try {
    return answer ? (JSON.parse(answer.body) as NodeDocument) : undefined;
  } catch {
    return undefined;
  }
}

const podReady = (pod: V1Pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Tracks every member until stopped; times are epoch milliseconds. */
export function trackRolling(readPods: () => Promise<V1Pod[]>) {
  const members = new Map<string, MemberTimeline & { startTime?: string; lastRole?: string }>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const pods = await readPods().catch(() => [] as V1Pod[]);
      await Promise.all(
        pods.map(async (pod) => {
          const name = pod.metadata?.name ?? '';
          const ip = pod.status?.podIP;
          const at = Date.now();
          const member = members.get(name) ?? { roles: [] };
          members.set(name, member);
          if (!podReady(pod)) member.notReady ??= at;
          else if (member.notReady !== undefined) member.readyAgain ??= at;
          const doc = ip ? await nodeDocument(ip) : undefined;
          if (!doc) return;
          if (doc.pending_restart) member.pendingSeen ??= at;
          if (member.startTime !== undefined && doc.postmaster_start_time && doc.postmaster_start_time !== member.startTime) member.restarted ??= at;
          member.startTime ??= doc.postmaster_start_time;
          if (member.pendingSeen !== undefined && !doc.pending_restart) member.pendingCleared ??= at;
          if (doc.role && doc.role !== member.lastRole) {
            if (member.lastRole !== undefined) member.roles.push({ role: doc.role, at });
            member.lastRole = doc.role;
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop(): Promise<Map<string, MemberTimeline>> {
      stopped = true;
      await loop;
      return members;
    },
  };
}

/** One line per member, seconds after `start`. */
export function describeRolling(members: Map<string, MemberTimeline>, start: number): string[] {
  const s = (at: number | undefined) => (at === undefined ? '-' : `+${((at - start) / 1000).toFixed(1)}`);
  return [...members.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, m]) => {
      const roles = m.roles.map((r) => `${r.role} ${s(r.at)}`).join(', ');
      return `${name}: pending ${s(m.pendingSeen)}, restarted ${s(m.restarted)}, cleared ${s(m.pendingCleared)}, notReady ${s(m.notReady)}, readyAgain ${s(m.readyAgain)}${roles ? `, role ${roles}` : ''}`;
    });
}
