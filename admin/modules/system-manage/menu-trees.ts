import { z } from 'zod';
import { success } from '../../http/envelope.js';
import type { ApiRouter } from '../../http/router.js';
import { parseBody } from '../../http/validate.js';
import type { AdminServices } from '../../services.js';
import { buttonGrantTree, menuGrantTree, type ButtonRow, type MenuRow } from './auth-trees.js';

// Query strings carry text: "true"/"false" (and 1/0) are what the clients send for booleans.
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const menuTreeQuery = z.object({ includeHidden: flag.optional() });

/** The menus a role dialog offers: not constant, and with a view in the front end (db/client-pages.ts; `absent` names its parameter). */
export const offeredMenus = (absent: string): string => `constant = false AND route_name <> ALL(${absent})`;

/**
 * GET /menus/tree, /menus/pages and /menus/buttons/tree: what the role dialogs offer for granting.
 * Constant pages (login, 403, 404, 500) are everybody's and never offered; nor is a module page
 * the front end has no view for (its grants are kept by a role-menu save, role-grants.ts).
 */
export function addMenuTreeRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids } = services;
  const encode = (id: number): string => ids.encode(id);
  const absent = (): string[] => services.clientPages.absentRouteNames();

  // Hidden menus (detail pages) are grantable like any page, so they are in unless the caller
  // asks to leave them out; the older client asks nothing and expects them.
  router.get('/menus/tree', { summary: 'Menus a role can be granted, as a tree', tags: ['menus'] }, async (req) => {
    const query = parseBody(menuTreeQuery, { includeHidden: typeof req.query.includeHidden === 'string' ? req.query.includeHidden : undefined });
    const { rows } = await db.query<MenuRow>(
      `SELECT id, parent_id AS "parentId", menu_name AS "menuName", menu_type AS "menuType", route_name AS "routeName", hide_in_menu AS "hideInMenu"
       FROM menus WHERE ${offeredMenus('$1')} ${query.includeHidden === false ? 'AND hide_in_menu = false' : ''} ORDER BY "order", id`,
      [absent()],
    );
    return success(menuGrantTree(rows, encode));
  });

  // `{key: menuName, value: id}` per page: the home-page choices of the role dialogs and the
  // active-menu choices of the menu form (which match on the menu name).
  router.get('/menus/pages', { summary: 'Pages (for choosing a home page)', tags: ['menus'] }, async () => {
    const { rows } = await db.query<{ id: number; menu_name: string; route_name: string }>(
      `SELECT id, menu_name, route_name FROM menus WHERE ${offeredMenus('$1')} AND menu_type = '2' AND status_type = '1' ORDER BY "order", id`,
      [absent()],
    );
    return success(rows.map((r) => ({ key: r.menu_name, value: encode(r.id), routeName: r.route_name })));
  });

  router.get('/menus/buttons/tree', { summary: 'Menus with their buttons, as a tree', tags: ['menus'] }, async () => {
    const menus = await db.query<Pick<MenuRow, 'id' | 'parentId' | 'menuName'>>(
      `SELECT id, parent_id AS "parentId", menu_name AS "menuName" FROM menus WHERE ${offeredMenus('$1')} ORDER BY "order", id`,
      [absent()],
    );
    const buttons = await db.query<ButtonRow>(
      `SELECT id, menu_id AS "menuId", button_code AS "buttonCode", button_desc AS "buttonDesc" FROM buttons ORDER BY id`,
    );
    return success(buttonGrantTree(menus.rows, buttons.rows, encode));
  });
}
