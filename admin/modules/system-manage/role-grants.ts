import { z } from 'zod';
import { Code } from '../../http/codes.js';
import { getCurrentUserId, getRequestId, isSuperAdmin, SUPER_ROLE } from '../../http/context.js';
import { BizError, success } from '../../http/envelope.js';
import { param, type ApiRouter } from '../../http/router.js';
import { parseBody } from '../../http/validate.js';
import { withTransaction, type Queryable } from '../../db/pool.js';
import type { AdminServices } from '../../services.js';
import { isGroupKey } from './auth-trees.js';
import { offeredMenus } from './menu-trees.js';

/** Keeps only ids that are no other granted menu's ancestor (the front end's checked leaves). */
export function leafMenuIds(granted: number[], parentOf: Map<number, number>): number[] {
  const parents = new Set<number>();
  for (const id of granted) {
    const p = parentOf.get(id);
    if (p) parents.add(p);
  }
  return granted.filter((id) => !parents.has(id));
}

/** Adds every ancestor of the given menus, so a granted page always shows under its catalog. */
export function withAncestors(menuIds: number[], parentOf: Map<number, number>): number[] {
  const all = new Set<number>();
  for (const id of menuIds) {
    let current: number | undefined = id;
    for (let depth = 0; current && !all.has(current) && depth < 64; depth++) {
      all.add(current);
      current = parentOf.get(current);
    }
  }
  return [...all];
}

/** Grants a role its home menu and the menu's ancestors (a role always reaches its home page). */
export async function grantHomeMenu(db: Queryable, roleId: number, homeMenuId: number): Promise<void> {
  await db.query(
    `INSERT INTO role_menus (role_id, menu_id)
     WITH RECURSIVE up AS (SELECT id, parent_id FROM menus WHERE id = $2 UNION SELECT m.id, m.parent_id FROM menus m JOIN up ON m.id = up.parent_id)
     SELECT $1, id FROM up ON CONFLICT DO NOTHING`,
    [roleId, homeMenuId],
  );
}

const idList = z.array(z.string().max(100)).max(10_000);
// Both optional: the older client's home selector saves the home page alone.
const menusBody = z.object({ byRoleHomeId: z.string().max(100).nullish(), byRoleMenuIds: idList.optional() });

/** GET and PATCH /roles/{id}/menus, /buttons, /apis: what a role is granted. */
export function addRoleGrantRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids } = services;
  const roleOf = async (value: string): Promise<{ id: number; code: string; homeId: number | null }> => {
    const { rows } = await db.query<{ role_code: string; home_menu_id: number | null }>('SELECT role_code, home_menu_id FROM roles WHERE id = $1', [
      ids.decode(value),
    ]);
    if (!rows[0]) throw new BizError(Code.NOT_FOUND, 'role not found');
    return { id: ids.decode(value), code: rows[0].role_code, homeId: rows[0].home_menu_id };
  };
  const parentMap = async (): Promise<Map<number, number>> => {
    const { rows } = await db.query<{ id: number; parent_id: number }>('SELECT id, parent_id FROM menus');
    return new Map(rows.map((r) => [r.id, r.parent_id]));
  };
  // Tree group ids (API tags, menus above buttons) come back from clients that save every ticked
  // node; they name no record and are left out.
  const decodeAll = (values: string[], field: string): number[] => values.flatMap((v, i) => (isGroupKey(v) ? [] : [ids.decode(v, `${field}.${i}`)]));
  const encodeAll = (values: number[]): string[] => values.map((id) => ids.encode(id));

  router.get('/roles/{id}/menus', { summary: 'Menus granted to a role', tags: ['roles'] }, async (req) => {
    const role = await roleOf(param(req, 'id'));
    const { rows } = await db.query<{ id: number }>(
      role.code === SUPER_ROLE
        ? 'SELECT id FROM menus WHERE constant = false ORDER BY id'
        : 'SELECT menu_id AS id FROM role_menus WHERE role_id = $1 ORDER BY menu_id',
      role.code === SUPER_ROLE ? [] : [role.id],
    );
    const parents = await parentMap();
    const granted = withAncestors([...rows.map((r) => r.id), ...(role.homeId ? [role.homeId] : [])], parents);
    return success({
      byRoleHomeId: role.homeId ? ids.encode(role.homeId) : null,
      byRoleMenuIds: encodeAll(leafMenuIds(granted, parents).sort((a, b) => a - b)),
    });
  });

  router.patch('/roles/{id}/menus', { summary: 'Replace the menus granted to a role', tags: ['roles'] }, async (req) => {
    const role = await roleOf(param(req, 'id'));
    const body = parseBody(menusBody, req.body);
    const homeId = body.byRoleHomeId === undefined ? role.homeId : body.byRoleHomeId ? ids.decode(body.byRoleHomeId, 'byRoleHomeId') : null;
    const parents = await parentMap();
    if (homeId !== null && !parents.has(homeId)) throw new BizError(Code.VALIDATION, 'byRoleHomeId: no such menu');
    const menuIds = await withTransaction(db, async (client) => {
      if (body.byRoleMenuIds !== undefined) {
        const chosen = withAncestors([...decodeAll(body.byRoleMenuIds, 'byRoleMenuIds'), ...(homeId ? [homeId] : [])], parents);
        // Only what the dialog offered is replaced: a grant on a menu it could not show (a page
        // the front end has no view for) is no choice of the editor and stays.
        await client.query(`DELETE FROM role_menus WHERE role_id = $1 AND menu_id IN (SELECT id FROM menus WHERE ${offeredMenus('$2')})`, [
          role.id,
          services.clientPages.absentRouteNames(),
        ]);
        if (chosen.length)
          await client.query('INSERT INTO role_menus (role_id, menu_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING', [role.id, chosen]);
      } else if (homeId) await grantHomeMenu(client, role.id, homeId);
      if (body.byRoleHomeId !== undefined)
        await client.query('UPDATE roles SET home_menu_id = $2, updated_at = now(), updated_by = $3 WHERE id = $1', [role.id, homeId, getCurrentUserId()]);
      return (await client.query<{ menu_id: number }>('SELECT menu_id FROM role_menus WHERE role_id = $1 ORDER BY menu_id', [role.id])).rows.map(
        (r) => r.menu_id,
      );
    });
    await services.principals.invalidateAll();
    return success({ byRoleHomeId: homeId ? ids.encode(homeId) : null, byRoleMenuIds: encodeAll(menuIds) }, 'updated');
  });

  const linkRoutes = (sub: 'buttons' | 'apis', table: string, column: string, field: string, source: string): void => {
    const noun = sub === 'apis' ? 'API' : 'button';
    router.get(`/roles/{id}/${sub}`, { summary: `${noun === 'API' ? 'APIs' : 'Buttons'} granted to a role`, tags: ['roles'] }, async (req) => {
      const role = await roleOf(param(req, 'id'));
      const { rows } = await db.query<{ id: number }>(
        role.code === SUPER_ROLE ? `SELECT id FROM ${source} ORDER BY id` : `SELECT ${column} AS id FROM ${table} WHERE role_id = $1 ORDER BY ${column}`,
        role.code === SUPER_ROLE ? [] : [role.id],
      );
      return success({ [field]: encodeAll(rows.map((r) => r.id)) });
    });

    router.patch(`/roles/{id}/${sub}`, { summary: `Replace the ${sub} granted to a role`, tags: ['roles'] }, async (req) => {
      const role = await roleOf(param(req, 'id'));
      const body = parseBody(z.object({ [field]: idList }), req.body) as Record<string, string[]>;
      const chosen = [...new Set(decodeAll(body[field], field))];
      // A non-super editor sees (and so can tick) only the APIs their own roles hold: the change
      // covers those alone, and grants beyond that view stay as they are.
      const viewOf = 'SELECT ra.api_id FROM role_apis ra JOIN user_roles ur ON ur.role_id = ra.role_id WHERE ur.user_id = $2';
      const scoped = sub === 'apis' && !isSuperAdmin();
      const actor = getCurrentUserId();
      if (scoped) {
        const { rows } = await db.query<{ id: number }>(`SELECT unnest($1::int[]) AS id EXCEPT ${viewOf}`, [chosen, actor]);
        if (rows.length) throw new BizError(Code.PERMISSION_DENIED, `${field}: only APIs your own roles hold can be granted`);
      }
      const { before, after } = await withTransaction(db, async (client) => {
        const read = async () =>
          (await client.query<{ id: number }>(`SELECT ${column} AS id FROM ${table} WHERE role_id = $1 ORDER BY ${column}`, [role.id])).rows.map((r) => r.id);
        const previous = await read();
        if (scoped) await client.query(`DELETE FROM ${table} WHERE role_id = $1 AND ${column} IN (${viewOf})`, [role.id, actor]);
        else await client.query(`DELETE FROM ${table} WHERE role_id = $1`, [role.id]);
        if (chosen.length)
          await client.query(`INSERT INTO ${table} (role_id, ${column}) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`, [role.id, chosen]);
        return { before: previous, after: await read() };
      });
      await services.principals.invalidateAll();
      const kept = new Set(after);
      const removed = before.filter((id) => !kept.has(id));
      const added = after.filter((id) => !before.includes(id));
      const data = { [field]: encodeAll(after), addedIds: encodeAll(added), removedIds: encodeAll(removed) };
      // Emptying a role is legitimate (the client's "untick everything"), so it is done, but said
      // in so many words and audited, with the removed ids to restore from (docs/adr/0209).
      if (!after.length && before.length) {
        services.audit.record('role.grants.emptied', 'warn', {
          userId: actor,
          roleCode: role.code,
          grant: sub,
          removedCount: before.length,
          requestId: getRequestId(),
        });
        return success(data, `removed every ${noun} grant of role ${role.code} (${before.length})`);
      }
      return success(data, 'updated');
    });
  };
  linkRoutes('buttons', 'role_buttons', 'button_id', 'byRoleButtonIds', 'buttons');
  linkRoutes('apis', 'role_apis', 'api_id', 'byRoleApiIds', 'apis');
}
