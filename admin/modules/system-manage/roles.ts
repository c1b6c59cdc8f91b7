import { z } from 'zod';
import { Code } from '../../http/codes.js';
import { SUPER_ROLE } from '../../http/context.js';
import { addResourceRoutes } from '../../resources/crud.js';
import { BizError } from '../../http/envelope.js';
import type { Fields } from '../../resources/records.js';
import type { ApiRouter } from '../../http/router.js';
import { optionalText, statusSchema } from '../../http/validate.js';
import type { AdminServices } from '../../services.js';
import { addRoleGrantRoutes, grantHomeMenu } from './role-grants.js';

export { leafMenuIds, withAncestors } from './role-grants.js';

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
const createRole = z.object({
  roleName: z.string().trim().min(1).max(20),
  roleCode: z
    .string()
    .trim()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,19}$/, 'letters, digits and _ (max 20)'),
  ...roleShape,
});
const updateRole = z.object({
  roleName: z.string().trim().min(1).max(20).optional(),
  roleCode: z
    .string()
    .trim()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,19}$/)
    .optional(),
  ...roleShape,
});

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
      // The home page is always among the role's menus, as the route delivery needs it.
      async afterWrite(client, id, input) {
        if (typeof input.byRoleHomeId === 'string' && input.byRoleHomeId) await grantHomeMenu(client, id, ids.decode(input.byRoleHomeId, 'byRoleHomeId'));
      },
      async beforeDelete(targets) {
        const { rowCount } = await db.query('SELECT 1 FROM roles WHERE id = ANY($1) AND role_code = $2', [targets, SUPER_ROLE]);
        if (rowCount) throw new BizError(Code.FAIL, `${SUPER_ROLE} cannot be deleted`);
      },
    },
  });

  addRoleGrantRoutes(router, services);
}
