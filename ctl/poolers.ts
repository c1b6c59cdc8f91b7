import type { PoolerReport } from '../sidecar/ha-node/pooler/fleet.js';
import { apiBase, callMember, type ClientOptions } from './client.js';
import type { ClusterDocument } from './discovery.js';
import { table } from './render.js';

/**
 * The poolers under `keelson ctl list`: asked of the leader (it points them at itself and pauses
 * them around a switchover), or of any member when there is no leader. Nothing when the cluster
 * has none or no member answers.
 */
export async function fetchPoolers(cluster: ClusterDocument, client: ClientOptions): Promise<PoolerReport[]> {
  const ordered = [...cluster.members].sort((a, b) => Number(b.role === 'leader') - Number(a.role === 'leader'));
  for (const member of ordered) {
    const reply = await callMember(apiBase(member.api_url), 'GET', '/poolers', undefined, client).catch(() => undefined);
    if (reply?.status !== 200) continue;
    try {
      const poolers = (JSON.parse(reply.text) as { poolers?: unknown }).poolers;
      return Array.isArray(poolers) ? (poolers as PoolerReport[]) : [];
    } catch {
      continue;
    }
  }
  return [];
}

export const poolerHeaders = ['Pooler', 'Paused', 'Target', 'Reaches PostgreSQL'];

/** One row per pooler, a read-only one marked so; a pooler that did not answer says so. */
export function renderPoolers(poolers: PoolerReport[]): string {
  if (poolers.length === 0) return '';
  const host = (url: string, readOnly?: boolean) => `${url.replace(/^https?:\/\//, '')}${readOnly ? ' (read-only)' : ''}`;
  const rows = poolers.map((p) =>
    p.answered
      ? [host(p.url, p.readOnly), p.paused ? 'yes' : 'no', `${p.target.host}:${p.target.port}`, p.reachable ? 'yes' : 'no']
      : [host(p.url, p.readOnly), '?', 'not answering', '?'],
  );
  return `+ Poolers\n${table(poolerHeaders, rows)}`;
}
