import { AdminPaths } from '../../../lib/ports.js';
import { ApiRouter } from '../../http/router.js';
import type { AdminServices } from '../../services.js';
import { addLoginRoutes } from './login.js';
import { addPasswordRoutes } from './password.js';
import { addProfileRoutes } from './profile.js';
import { addSessionRoutes } from './session.js';

/** /api/v1/auth: public unless a route says otherwise. */
export function createAuthRouter(services: AdminServices): ApiRouter {
  const router = new ApiRouter(`${AdminPaths.apiPrefix}/auth`, { guard: 'public', tags: ['auth'] });
  addLoginRoutes(router, services);
  addSessionRoutes(router, services);
  addPasswordRoutes(router, services);
  addProfileRoutes(router, services);
  return router;
}
