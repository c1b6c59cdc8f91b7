import type { Logger } from '../../lib/log.js';
import type { MountedRoute } from '../http/router.js';
import { withTransaction, type Db } from './pool.js';

export interface ReconcileResult {
  inserted: number;
  updated: number;
  deleted: number;
}

/**
 * Makes the apis table match the registered routes, keyed by (lower-case method, route template):
 * new routes are inserted, vanished ones deleted with their grants, summaries and tags refreshed.
 * A route's status (enable/disable) is an administrator's choice and is kept.
 */
export async function reconcileApis(db: Db, routes: readonly MountedRoute[], logger?: Logger): Promise<ReconcileResult> {
  const wanted = new Map(routes.map((r) => [`${r.method} ${r.template}`, r]));
  return withTransaction(db, async (client) => {
    await client.query('LOCK TABLE apis IN SHARE ROW EXCLUSIVE MODE');
    const { rows } = await client.query<{ id: number; api_method: string; api_path: string; summary: string; tags: string[] }>(
      'SELECT id, api_method, api_path, summary, tags FROM apis',
    );
    const result: ReconcileResult = { inserted: 0, updated: 0, deleted: 0 };
    const existing = new Set<string>();
    const stale: number[] = [];
    for (const row of rows) {
      const key = `${row.api_method} ${row.api_path}`;
      const route = wanted.get(key);
      if (!route) {
        stale.push(row.id);
        continue;
      }
      existing.add(key);
      if (row.summary !== route.summary || row.tags.join('|') !== route.tags.join('|')) {
        await client.query('UPDATE apis SET summary = $2, tags = $3, updated_at = now() WHERE id = $1', [row.id, route.summary, route.tags]);
        result.updated++;
      }
    }
    if (stale.length) {
      await client.query('DELETE FROM apis WHERE id = ANY($1)', [stale]);
      result.deleted = stale.length;
    }
    for (const [key, route] of wanted) {
      if (existing.has(key)) continue;
      await client.query('INSERT INTO apis (api_method, api_path, summary, tags, is_system) VALUES ($1, $2, $3, $4, true)', [
        route.method,
        route.template,
        route.summary,
        route.tags,
      ]);
      result.inserted++;
    }
    logger?.info(result, 'api table reconciled with routes');
    return result;
  });
}
