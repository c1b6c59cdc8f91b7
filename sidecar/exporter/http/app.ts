import type { Express, NextFunction, Request, Response } from 'express';
import { createApp } from '../../../lib/http.js';
import { ExporterPaths } from '../../../lib/ports.js';
import { explainText, statText } from '../scrape/explain.js';
import { sendBody } from './body.js';
import { adminPaths, healthRoutes, healthStatus, plain, type RouteSettings } from './routes.js';

/**
 * The exporter's HTTP API in full, loaded on the first request the listener in routes.ts does not
 * answer itself. Health answers come from the cached state only (body = state word);
 * unknown paths are 404 rather than pg_exporter's 200 landing page, so a mistyped probe path fails loudly.
 */
export function createExporterApp(settings: RouteSettings): Express {
  const app = createApp(settings.logger);
  // Bodies change on every scrape; hashing 100 KB for an ETag nobody sends back is wasted time.
  app.set('etag', false);
  const { exporter, health } = settings;

  app.use((req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of Object.entries(settings.headers)) res.setHeader(name, value);
    const auth = settings.auth;
    if (!auth?.enabled || (settings.authScope === 'admin' && !adminPaths.has(req.path))) return next();
    auth.check(req.headers.authorization).then((ok) => {
      if (ok) return next();
      res.status(401).setHeader('WWW-Authenticate', 'Basic').type(plain).send('Unauthorized\n');
    }, next);
  });

  app.get(settings.telemetryPath, (req, res, next) => {
    exporter.scrape().then((body) => sendBody(res, body), next);
  });

  for (const route of healthRoutes) {
    app.get(route.paths, (_req, res) => {
      res.status(healthStatus(route.check, health.state)).type(plain).send(health.state);
    });
  }

  app.all(ExporterPaths.reload, (req, res) => {
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.status(405).setHeader('Allow', 'GET, POST').type(plain).send('method not allowed');
      return;
    }
    try {
      exporter.reload();
      res.status(200).type(plain).send('server reloaded');
    } catch (error) {
      req.log?.error({ err: (error as Error).message }, 'reload failed');
      res
        .status(500)
        .type(plain)
        .send(`fail to reload: ${(error as Error).message}`);
    }
  });

  app.get(ExporterPaths.explain, (_req, res) => {
    res
      .status(200)
      .type(plain)
      .send(explainText(exporter.main.installed().map((r) => r.collector)));
  });

  app.get(ExporterPaths.stat, (_req, res) => {
    res.status(200).type(plain).send(statText(exporter.main.installed()));
  });

  app.get(ExporterPaths.version, (_req, res) => {
    res.status(200).type(plain).send(settings.versionText);
  });

  app.get('/', (_req, res) => {
    res
      .status(200)
      .type('html')
      .send(`<html><head><title>PG Exporter</title></head><body><h1>PG Exporter</h1><p><a href="${settings.telemetryPath}">Metrics</a></p></body></html>`);
  });

  app.use((_req: Request, res: Response) => {
    res.status(404).type(plain).send('not found');
  });

  app.use((error: Error, req: Request, res: Response, _next: NextFunction) => {
    req.log?.error({ err: error.message }, 'request failed');
    if (!res.headersSent) res.status(500).type(plain).send(`internal error: ${error.message}`);
  });
  return app;
}
