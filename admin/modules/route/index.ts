import { z } from 'zod';
import { AdminPaths } from '../../../lib/ports.js';
import { KvKeys } from '../../cache/kv.js';
import { Code } from '../../http/codes.js';
import { getCurrentUserId, isSuperAdmin } from '../../http/context.js';
import { BizError, success } from '../../http/envelope.js';
import { ApiRouter } from '../../http/router.js';
import { refuseUnstorableText } from '../../http/validate.js';
import type { AdminServices } from '../../services.js';
import { buildRouteTree, toRouteNode, type MenuRow } from './routes.js';

const CONSTANT_ROUTES_TTL_SECONDS = 300;

/** Constant routes (login and error pages) from Redis, rebuilt from the database on a miss. */
export async function constantRoutes(services: AdminServices): Promise<unknown[]> {
  const cached = await services.kv.run((r) => r.get(KvKeys.constantRoutes)).catch(() => null);
  if (cached) return JSON.parse(cached) as unknown[];
  const { rows } = await services.db.query<MenuRow>(`SELECT * FROM menus WHERE constant = true AND status_type = '1' ORDER BY "order", id`);
  const routes = rows.map((m) => {
    const node = toRouteNode(m, () => undefined);
    node.meta = { title: m.menu_name, i18nKey: m.i18n_key ?? `route.${m.route_name}`, constant: true, hideInMenu: true };
    return node;
  });
  await services.kv.run((r) => r.set(KvKeys.constantRoutes, JSON.stringify(routes), 'EX', CONSTANT_ROUTES_TTL_SECONDS)).catch(() => undefined);
  return routes;
}

/** /api/v1/route: what the Soybean front end needs to build its router. */
export function createRouteRouter(services: AdminServices): ApiRouter {
  const { db } = services;
  const router = new ApiRouter(`${AdminPaths.apiPrefix}/route`, { guard: 'auth', tags: ['route'] });

  router.get('/constant-routes', { summary: 'Public routes (login and error pages)', guard: 'public' }, async () => success(await constantRoutes(services)));

  // Open while a password change is pending: the client needs its routes to show the password page.
  router.get('/user-routes', { summary: 'Menu tree of the current user', openDuringPasswordChange: true }, async () => {
    const userId = getCurrentUserId();
    // A module page the front end has no view for is never delivered (db/client-pages.ts).
    const absent = services.clientPages.absentRouteNames();
    const menus = isSuperAdmin()
      ? await db.query<MenuRow>(`SELECT * FROM menus WHERE constant = false AND status_type = '1' AND route_name <> ALL($1)`, [absent])
      : await db.query<MenuRow>(
          `WITH RECURSIVE granted AS (
             SELECT m.* FROM menus m WHERE m.status_type = '1' AND m.constant = false AND m.route_name <> ALL($2) AND m.id IN (
               SELECT rm.menu_id FROM role_menus rm JOIN roles r ON r.id = rm.role_id JOIN user_roles ur ON ur.role_id = r.id
               WHERE ur.user_id = $1 AND r.status_type = '1')
             UNION
             SELECT p.* FROM menus p JOIN granted g ON p.id = g.parent_id WHERE p.status_type = '1')
           SELECT * FROM granted`,
          [userId, absent],
        );
    const home = await db.query<{ route_name: string }>(
      `SELECT m.route_name FROM roles r JOIN user_roles ur ON ur.role_id = r.id JOIN menus m ON m.id = r.home_menu_id
       WHERE ur.user_id = $1 AND r.status_type = '1' ORDER BY r.created_at DESC, r.id DESC LIMIT 1`,
      [userId],
    );
    return success({ home: home.rows[0]?.route_name ?? 'home', routes: buildRouteTree(menus.rows) });
  });

  router.get('/exists', { summary: 'Whether a route name exists', openDuringPasswordChange: true }, async (req) => {
    const name = z.string().min(1).max(100).safeParse(req.query.name);
    if (!name.success) throw new BizError(Code.VALIDATION, 'name: a route name is required');
    refuseUnstorableText(name.data, 'name');
    const { rowCount } = await db.query(`SELECT 1 FROM menus WHERE route_name = $1 AND status_type = '1'`, [name.data]);
    return success((rowCount ?? 0) > 0);
  });
  return router;
}
