import { z } from 'zod';
import { Code } from '../../core/codes.js';
import { SUPER_ROLE } from '../../core/context.js';
import { addResourceRoutes } from '../../core/crud.js';
import { BizError, success } from '../../core/envelope.js';
import type { Fields } from '../../core/records.js';
import { param, type ApiRouter } from '../../core/router.js';
import { optionalText, parseBody, statusSchema } from '../../core/validate.js';
import { withTransaction } from '../../db/pool.js';
import type { AdminServices } from '../../services.js';

export const roleFields: Fields = {
  id: { column: 'id', kind: 'id', orderable: true },
  roleName: { column: 'role_name', kind: 'text', filter: 'contains', orderable: true },
  roleCode: { column: 'role_code', kind: 'text', filter: 'contains', orderable: true },
  roleDesc: { column: 'role_desc', kind: 'text' },
  dataScope: { column: 'data_scope', kind: 'text' },
  byRoleHomeId: { column: 'home_menu_id', kind: 'id' },
  statusType: { column: 'status_type', kind: 'text', filter: 'eq', orderable: true },
};

const dataScope = z.enum(['all', 'scope', 'self', 'custom']);
const roleShape = { roleDesc: optionalText(500), dataScope: dataScope.optional(), byRoleHomeId: z.string().nullish(), statusType: statusSchema.optional() };
const createRole = z.object({ roleName: z.string().trim().min(1).max(20), roleCode: z.string().trim().regex(/^[A-Za-z][A-Za-z0-9_]{0,19}$/, 'letters, digits and _ (max 20)'), ...roleShape });
const updateRole = z.object({ roleName: z.string().trim().min(1).max(20).optional(), roleCode: z.string().trim().regex(/^[A-Za-z][A-Za-z0-9_]{0,19}$/).optional(), ...roleShape });
const idList = (name: string) => z.object({ [name]: z.array(z.string()).max(10_000) });
const menusBody = z.object({ byRoleHomeId: z.string().nullish(), byRoleMenuIds: z.array(z.string()).max(10_000) });

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

/** /roles: the standard routes plus the menu, button and API grants of a role. */
export function addRoleRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, ids } = services;
  addResourceRoutes(router, services, {
    path: '/roles',
    table: 'roles',
    noun: 'role',
    fields: roleFields,
    createSchema: createRole,
    updateSchema: updateRole,
    buttons: { create: 'B_SYSTEM_ROLE_CREATE', update: 'B_SYSTEM_ROLE_UPDATE', delete: 'B_SYSTEM_ROLE_DELETE', batchDelete: 'B_SYSTEM_ROLE_BATCH_DELETE' },
    hooks: {
      // R_SUPER is what every bypass checks for: it cannot be deleted, renamed away or disabled.
      async beforeWrite(input, action, id) {
        if (action !== 'update' || id === undefined) return {};
        const { rows } = await db.query<{ role_code: string }>('SELECT role_code FROM roles WHERE id = $1', [id]);
        const isSuper = rows[0]?.role_code === SUPER_ROLE;
        if (isSuper && ((input.roleCode !== undefined && input.roleCode !== SUPER_ROLE) || (input.statusType !== undefined && input.statusType !== '1'))) {
          throw new BizError(Code.FAIL, `${SUPER_ROLE} cannot be renamed or disabled`);
        }
        return {};
      },
      async beforeDelete(targets) {
        const { rowCount } = await db.query('SELECT 1 FROM roles WHERE id = ANY($1) AND role_code = $2', [targets, SUPER_ROLE]);
        if (rowCount) throw new BizError(Code.FAIL, `${SUPER_ROLE} cannot be deleted`);
      },
    },
  });

  const roleId = async (value: string): Promise<{ id: number; code: string }> => {
    const id = ids.decode(value);
    const { rows } = await db.query<{ role_code: string }>('SELECT role_code FROM roles WHERE id = $1', [id]);
    if (!rows[0]) throw new BizError(Code.NOT_FOUND, 'role not found');
    return { id, code: rows[0].role_code };
  };
  const parentMap = async (): Promise<Map<number, number>> => {
    const { rows } = await db.query<{ id: number; parent_id: number }>('SELECT id, parent_id FROM menus');
    return new Map(rows.map((r) => [r.id, r.parent_id]));
  };
  const decodeAll = (values: string[], field: string): number[] => values.map((v, i) => ids.decode(v, `${field}.${i}`));

  router.get('/roles/{id}/menus', { summary: 'Menus granted to a role', tags: ['roles'] }, async (req) => {
    const role = await roleId(param(req, 'id'));
    const home = await db.query<{ home_menu_id: number | null }>('SELECT home_menu_id FROM roles WHERE id = $1', [role.id]);
    const { rows } = await db.query<{ id: number }>(
      role.code === SUPER_ROLE ? 'SELECT id FROM menus WHERE constant = false ORDER BY id' : 'SELECT menu_id AS id FROM role_menus WHERE role_id = $1 ORDER BY menu_id',
      role.code === SUPER_ROLE ? [] : [role.id],
    );
    const leaves = leafMenuIds(rows.map((r) => r.id), await parentMap());
    const homeId = home.rows[0]?.home_menu_id;
    return success({ byRoleHomeId: homeId ? ids.encode(homeId) : null, byRoleMenuIds: leaves.map((id) => ids.encode(id)) });
  });

  router.patch('/roles/{id}/menus', { summary: 'Replace the menus granted to a role', tags: ['roles'] }, async (req) => {
    const role = await roleId(param(req, 'id'));
    const body = parseBody(menusBody, req.body);
    const menuIds = withAncestors(decodeAll(body.byRoleMenuIds, 'byRoleMenuIds'), await parentMap());
    await withTransaction(db, async (client) => {
      await client.query('DELETE FROM role_menus WHERE role_id = $1', [role.id]);
      if (menuIds.length) await client.query('INSERT INTO role_menus (role_id, menu_id) SELECT $1, unnest($2::int[])', [role.id, menuIds]);
      if (body.byRoleHomeId !== undefined) await client.query('UPDATE roles SET home_menu_id = $2, updated_at = now() WHERE id = $1', [role.id, body.byRoleHomeId ? ids.decode(body.byRoleHomeId, 'byRoleHomeId') : null]);
    });
    await services.principals.invalidateAll();
    return success({ byRoleMenuIds: menuIds.map((id) => ids.encode(id)) }, 'updated');
  });

  const linkRoutes = (sub: 'buttons' | 'apis', table: string, column: string, field: string, source: string): void => {
    router.get(`/roles/{id}/${sub}`, { summary: `${sub === 'apis' ? 'APIs' : 'Buttons'} granted to a role`, tags: ['roles'] }, async (req) => {
      const role = await roleId(param(req, 'id'));
      const { rows } = await db.query<{ id: number }>(
        role.code === SUPER_ROLE ? `SELECT id FROM ${source} ORDER BY id` : `SELECT ${column} AS id FROM ${table} WHERE role_id = $1 ORDER BY ${column}`,
        role.code === SUPER_ROLE ? [] : [role.id],
      );
      return success({ [field]: rows.map((r) => ids.encode(r.id)) });
    });
    router.patch(`/roles/{id}/${sub}`, { summary: `Replace the ${sub} granted to a role`, tags: ['roles'] }, async (req) => {
      const role = await roleId(param(req, 'id'));
      const body = parseBody(idList(field), req.body) as Record<string, string[]>;
      const targets = decodeAll(body[field], field);
      await withTransaction(db, async (client) => {
        await client.query(`DELETE FROM ${table} WHERE role_id = $1`, [role.id]);
        if (targets.length) await client.query(`INSERT INTO ${table} (role_id, ${column}) SELECT $1, unnest($2::int[])`, [role.id, targets]);
      });
      await services.principals.invalidateAll();
      return success({ [field]: targets.map((id) => ids.encode(id)) }, 'updated');
    });
  };
  linkRoutes('buttons', 'role_buttons', 'button_id', 'byRoleButtonIds', 'buttons');
  linkRoutes('apis', 'role_apis', 'api_id', 'byRoleApiIds', 'apis');
}
