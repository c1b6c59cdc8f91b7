/**
 * A hidden page's active menu (the menu highlighted while it shows). The menu form of the
 * Soybean clients sends `activeMenu`, naming the menu by its route name (the older client's page
 * list) or by its name (fast-soy-admin matches names); the record keeps `activeMenuId`. Both are
 * accepted: `activeMenuId` wins when both come, and the record carries `activeMenu` (the route
 * name, as route meta has it) so a form that reads it back saves it unchanged.
 */
import type { Queryable } from '../../db/pool.js';
import { Code } from '../../http/codes.js';
import { BizError } from '../../http/envelope.js';
import type { IdCodec } from '../../resources/ids.js';

/** The menu id `activeMenu` names (null clears it): by route name, else by a unique name, else a public id. */
export async function resolveActiveMenu(db: Queryable, ids: IdCodec, value: string | null): Promise<number | null> {
  if (value === null) return null;
  const { rows } = await db.query<{ id: number; matched: 'route' | 'name' }>(
    `SELECT id, 'route' AS matched FROM menus WHERE route_name = $1 UNION ALL SELECT id, 'name' FROM menus WHERE menu_name = $1`,
    [value],
  );
  const byRoute = rows.find((r) => r.matched === 'route');
  if (byRoute) return byRoute.id;
  const byName = rows.filter((r) => r.matched === 'name');
  if (byName.length === 1) return byName[0].id;
  if (byName.length > 1) throw new BizError(Code.VALIDATION, `activeMenu: several menus are named "${value}"; give its route name`);
  const id = ids.tryDecode(value);
  if (id !== undefined && ((await db.query('SELECT 1 FROM menus WHERE id = $1', [id])).rowCount ?? 0) > 0) return id;
  throw new BizError(Code.VALIDATION, `activeMenu: no menu has the route name, name or id "${value}"`);
}

/** The column change for a write: only when `activeMenu` came without `activeMenuId`. */
export async function activeMenuColumn(db: Queryable, ids: IdCodec, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (input.activeMenuId !== undefined || input.activeMenu === undefined) return {};
  return { active_menu_id: await resolveActiveMenu(db, ids, (input.activeMenu as string | null) ?? null) };
}
