import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createApp } from '../../../lib/http.js';
import { loadApiCredentials } from '../../../api/ha-node/credentials.js';
import type { ApiContext, ApiModule } from './context.js';
import { failsafeRoutes } from './failsafe.js';
import { healthFallback, healthRoutes } from './health.js';
import { managedRoutes } from './managed-route.js';
import { monitoringRoutes } from './monitoring.js';
import { clientCertificateGate } from './client-certificate.js';

/** The read-side modules every ha-node serves. */
export const readModules: ApiModule[] = [healthRoutes, monitoringRoutes, failsafeRoutes, managedRoutes];

/**
 * The REST API on 8008: the given route modules in order (read side first, then any mutating
 * modules), then the catch-all health check for GET/HEAD/OPTIONS and 501 for other methods.
 */
export function createHaNodeApp(given: ApiContext, extraModules: ApiModule[] = []): Express {
  const context: ApiContext = { ...given, credentials: given.credentials === undefined ? (loadApiCredentials() ?? null) : given.credentials };
  const app = createApp(context.logger);
  app.set('etag', false);
  if (context.verifyClient && context.verifyClient !== 'none') app.use(clientCertificateGate);
  // Patroni dispatches on the exact path: `/FAILSAFE` is not `/failsafe`.
  const router = express.Router({ caseSensitive: true });
  for (const register of [...readModules, ...extraModules]) register(router, context);
  healthFallback(router, context);
  app.use(router);
  app.use((_req: Request, res: Response) => {
    res.status(501).type('text/plain').send('Unsupported method');
  });
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    void next;
    req.log?.error({ err: error instanceof Error ? error.message : String(error) }, 'request failed');
    if (!res.headersSent) res.status(500).type('text/plain').send('internal error');
  });
  return app;
}
