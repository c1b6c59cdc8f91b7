import type { ClusterView } from '../dcs/types.js';

/**
 * The leader's side of failsafe mode: POST /failsafe to every member the leader last listed (the
 * `failsafe` annotation, or all known members). True only when every one of them answers 200,
 * i.e. confirms it is not running as a primary.
 */
export async function confirmFailsafe(cluster: ClusterView | undefined, self: { name: string; api_url: string; conn_url: string }, timeoutMs = 2000): Promise<boolean> {
  const listed = cluster?.leaderRecord?.failsafe ?? Object.fromEntries((cluster?.members ?? []).map((m) => [m.name, m.api_url]));
  const targets = Object.entries(listed).filter(([name, url]) => name !== self.name && url);
  const body = JSON.stringify(self);
  const answers = await Promise.all(
    targets.map(async ([, url]) => {
      try {
        const response = await fetch(url.replace(/\/ha$/, '/failsafe'), { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
        await response.arrayBuffer();
        return response.status === 200;
      } catch {
        return false;
      }
    }),
  );
  return answers.every(Boolean);
}
