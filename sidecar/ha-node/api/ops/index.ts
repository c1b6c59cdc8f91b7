import type { ApiCredentials } from '../../../../api/ha-node/credentials.js';
import type { ApiModule } from '../context.js';
import { configRoutes } from './config-routes.js';
import { failoverRoutes, type FailoverRouteOptions } from './failover-routes.js';
import { restartRoutes } from './restart-routes.js';
import { backupRoutes } from './backup-routes.js';

export interface OpsModuleOptions extends FailoverRouteOptions {
  /** Credentials for the mutating endpoints; default: the app's (ApiContext.credentials). */
  credentials?: ApiCredentials | null;
}

/**
 * The mutating half of the ha-node REST API as route modules for createHaNodeApp.
 * Reads stay open for probes; every POST/PATCH/PUT/DELETE here checks the credentials.
 */
export function createOpsModules(options: OpsModuleOptions = {}): ApiModule[] {
  let credentials: ApiCredentials | undefined;
  const resolve: ApiModule = (_router, context) => {
    credentials = (options.credentials === undefined ? context.credentials : options.credentials) ?? undefined;
    if (!credentials) context.logger.warn('no API credentials configured: mutating endpoints are open');
  };
  const late =
    (factory: (c: ApiCredentials | undefined) => ApiModule): ApiModule =>
    (router, context) =>
      factory(credentials)(router, context);
  return [resolve, late(configRoutes), late((c) => failoverRoutes(c, options)), late(restartRoutes), late(backupRoutes)];
}

/** The modules with credentials from KEELSON_API_USERNAME/PASSWORD/TOKEN (or their *_FILE variants). */
export const opsModules: ApiModule[] = createOpsModules();
