import { AdminPaths } from '../../../lib/ports.js';
import { ApiRouter } from '../../http/router.js';
import type { AdminServices } from '../../services.js';
import { addApiRoutes } from './apis.js';
import { addDictionaryRoutes } from './dictionaries.js';
import { addMenuRoutes } from './menus.js';
import { addRoleRoutes } from './roles.js';
import { addUserRoutes } from './users.js';

/** /api/v1/system-manage: users, roles, menus, APIs, dictionaries; every route behind API permission. */
export function createSystemManageRouter(services: AdminServices): ApiRouter {
  const router = new ApiRouter(`${AdminPaths.apiPrefix}/system-manage`, { guard: 'permission', tags: ['system-manage'] });
  addUserRoutes(router, services);
  addRoleRoutes(router, services);
  addMenuRoutes(router, services);
  addApiRoutes(router, services);
  addDictionaryRoutes(router, services);
  return router;
}
