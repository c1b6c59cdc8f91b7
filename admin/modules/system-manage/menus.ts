import { z } from 'zod';
import { KvKeys } from '../../cache/kv.js';
import { addResourceRoutes } from '../../resources/crud.js';
import { Code } from '../../http/codes.js';
import { BizError } from '../../http/envelope.js';
import type { Fields } from '../../resources/records.js';
import type { ApiRouter } from '../../http/router.js';
import { optionalText, statusSchema } from '../../http/validate.js';
import type { AdminServices } from '../../services.js';
import { activeMenuColumn } from './active-menu.js';
import { addMenuTreeRoutes } from './menu-trees.js';

export const menuFields: Fields = {
  id: { column: 'id', kind: 'id', orderable: true },
  menuName: { column: 'menu_name', kind: 'text', filter: 'contains', orderable: true },
  menuType: { column: 'menu_type', kind: 'text', filter: 'eq' },
  routeName: { column: 'route_name', kind: 'text', filter: 'contains', orderable: true },
  routePath: { column: 'route_path', kind: 'text', filter: 'contains', orderable: true },
  // 0 in the table (root), null in records: what the clients test for a root menu.
  parentId: { column: 'parent_id', kind: 'id', filter: 'eq', rootAsNull: true },
  pathParam: { column: 'path_param', kind: 'text' },
  routeParam: { column: 'route_param', kind: 'json' },
  component: { column: 'component', kind: 'text' },
  redirect: { column: 'redirect', kind: 'text' },
  props: { column: 'props', kind: 'bool' },
  constant: { column: 'constant', kind: 'bool', filter: 'eq' },
  order: { column: 'order', kind: 'int', orderable: true },
  i18nKey: { column: 'i18n_key', kind: 'text' },
  icon: { column: 'icon', kind: 'text' },
  iconType: { column: 'icon_type', kind: 'text' },
  href: { column: 'href', kind: 'text' },
  multiTab: { column: 'multi_tab', kind: 'bool' },
  keepAlive: { column: 'keep_alive', kind: 'bool' },
  hideInMenu: { column: 'hide_in_menu', kind: 'bool', filter: 'eq' },
  activeMenuId: { column: 'active_menu_id', kind: 'id' },
  fixedIndexInTab: { column: 'fixed_index_in_tab', kind: 'int' },
  statusType: { column: 'status_type', kind: 'text', filter: 'eq', orderable: true },
};

const buttonInput = z.object({
  buttonCode: z.string().regex(/^B_[A-Za-z0-9_]{1,98}$/, 'button codes start with B_'),
  buttonDesc: z.string().max(200).default(''),
});
const menuShape = {
  menuType: z.enum(['1', '2']).optional(),
  parentId: z.union([z.string(), z.literal(0)]).nullish(),
  pathParam: optionalText(200),
  routeParam: z
    .array(z.object({ key: z.string().max(100), value: z.string().max(500) }))
    .max(50)
    .nullish(),
  component: optionalText(200),
  redirect: optionalText(200),
  props: z.boolean().optional(),
  constant: z.boolean().optional(),
  order: z.number().int().min(-100000).max(100000).optional(),
  i18nKey: optionalText(100),
  icon: optionalText(100),
  iconType: z.enum(['1', '2']).optional(),
  href: optionalText(200),
  multiTab: z.boolean().optional(),
  keepAlive: z.boolean().optional(),
  hideInMenu: z.boolean().optional(),
  activeMenuId: z.string().nullish(),
  // What the clients' menu form sends (active-menu.ts).
  activeMenu: optionalText(100),
  fixedIndexInTab: z.number().int().min(0).max(1000).nullish(),
  statusType: statusSchema.optional(),
  byMenuButtons: z.array(buttonInput).max(100).optional(),
};
const routeName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, _ and -');
const routePath = z
  .string()
  .trim()
  .regex(/^\/[^\s]{0,199}$/, 'must start with /');
const createMenu = z.object({ menuName: z.string().trim().min(1).max(100), routeName, routePath, ...menuShape });
const updateMenu = z.object({
  menuName: z.string().trim().min(1).max(100).optional(),
  routeName: routeName.optional(),
  routePath: routePath.optional(),
  ...menuShape,
});

/**
 * The menu list's toggles as the current client sends them: constant pages are listed only while
 * includeConstant is on, other hidden menus only while includeHidden is on (constant pages are
 * hidden too, but only their own toggle counts). An absent toggle lists them (older clients send
 * none and expect every menu); includeBusiness is accepted, business menus are always listed.
 */
const menuSearchShape = { includeConstant: z.boolean().nullish(), includeHidden: z.boolean().nullish(), includeBusiness: z.boolean().nullish() };
function menuSearchWhere(body: Record<string, unknown>): string[] {
  const where: string[] = [];
  if (body.includeConstant === false) where.push('constant = false');
  if (body.includeHidden === false) where.push('(constant OR hide_in_menu = false)');
  return where;
}

/** /menus: the standard routes and buttons kept on their menu (the grant trees: menu-trees.ts). */
export function addMenuRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids } = services;
  addMenuTreeRoutes(router, services);
  addResourceRoutes(router, services, {
    path: '/menus',
    table: 'menus',
    noun: 'menu',
    fields: menuFields,
    createSchema: createMenu,
    updateSchema: updateMenu,
    searchShape: menuSearchShape,
    defaultOrder: '"order" ASC',
    buttons: { create: 'B_SYSTEM_MENU_CREATE', update: 'B_SYSTEM_MENU_UPDATE', delete: 'B_SYSTEM_MENU_DELETE', batchDelete: 'B_SYSTEM_MENU_BATCH_DELETE' },
    hooks: {
      searchWhere: menuSearchWhere,
      beforeWrite: (input) => activeMenuColumn(db, ids, input),
      async beforeDelete(targets) {
        // Deleting a parent would leave its children pointing at nothing.
        const { rows } = await db.query<{ route_name: string }>('SELECT route_name FROM menus WHERE parent_id = ANY($1) AND NOT (id = ANY($1)) LIMIT 5', [
          targets,
        ]);
        if (rows.length) throw new BizError(Code.FAIL, `delete the child menus first: ${rows.map((r) => r.route_name).join(', ')}`);
      },
      async afterCommit() {
        await services.kv.run((r) => r.del(KvKeys.constantRoutes)).catch(() => undefined);
      },
      async afterWrite(client, id, input) {
        const buttons = input.byMenuButtons as { buttonCode: string; buttonDesc: string }[] | undefined;
        if (!buttons) return;
        const codes = buttons.map((b) => b.buttonCode);
        await client.query('DELETE FROM buttons WHERE menu_id = $1 AND NOT (button_code = ANY($2))', [id, codes]);
        for (const b of buttons) {
          await client.query(
            `INSERT INTO buttons (button_code, button_desc, menu_id) VALUES ($1, $2, $3)
             ON CONFLICT (button_code) DO UPDATE SET button_desc = EXCLUDED.button_desc, menu_id = EXCLUDED.menu_id, updated_at = now()`,
            [b.buttonCode, b.buttonDesc, id],
          );
        }
      },
      async decorate(records, rows) {
        const { rows: buttons } = await db.query<{ id: number; menu_id: number; button_code: string; button_desc: string }>(
          'SELECT id, menu_id, button_code, button_desc FROM buttons WHERE menu_id = ANY($1) ORDER BY id',
          [rows.map((r) => r.id)],
        );
        const active = await db.query<{ id: number; route_name: string }>('SELECT id, route_name FROM menus WHERE id = ANY($1)', [
          rows.map((r) => r.active_menu_id).filter((v) => v !== null),
        ]);
        rows.forEach((row, i) => {
          records[i].buttons = buttons
            .filter((b) => b.menu_id === row.id)
            .map((b) => ({ id: ids.encode(b.id), buttonCode: b.button_code, buttonDesc: b.button_desc }));
          records[i].activeMenu = active.rows.find((a) => a.id === row.active_menu_id)?.route_name ?? null;
        });
      },
    },
  });
}
