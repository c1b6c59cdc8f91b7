import type { ClusterView } from '../../dcs/types.js';
import { callPeer, type PeerApiTls } from '../peer-api.js';

/**
 * The leader's side of failsafe mode: POST /failsafe to every member the leader last listed (the
 * `failsafe` annotation, or all known members). True only when every one of them answers 200,
 * i.e. confirms it is not running as a primary. The members share the API credentials, so each
 * call carries this member's own Authorization header.
 */
export async function confirmFailsafe(
  cluster: ClusterView | undefined,
  self: { name: string; api_url: string; conn_url: string },
  options: { authorization?: string; timeoutMs?: number; tls?: PeerApiTls } = {},
): Promise<boolean> {
  const { authorization, timeoutMs = 2000 } = options;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) };
  const listed = cluster?.leaderRecord?.failsafe ?? Object.fromEntries((cluster?.members ?? []).map((m) => [m.name, m.api_url]));
  const targets = Object.entries(listed).filter(([name, url]) => name !== self.name && url);
  const body = JSON.stringify(self);
  const answers = await Promise.all(
    targets.map(async ([name, url]) => {
      try {
        const answer = await callPeer({ name }, url.replace(/\/ha$/, '/failsafe'), { method: 'POST', body, headers, timeoutMs }, options.tls);
        return answer.status === 200;
      } catch {
        return false;
      }
    }),
  );
  return answers.every(Boolean);
}
