import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';
import { createApp, requestIdFrom } from '../../lib/http.js';
import type { Logger } from '../../lib/log.js';
import { ExporterPaths } from '../../lib/ports.js';
import { explainText, statText } from './explain.js';
import { sendBody } from './body.js';
import type { Exporter } from './exporter.js';
import { isAvailable, type HealthProbe } from './health.js';
import type { BasicAuthChecker } from './webconfig.js';

export type AuthScope = 'all' | 'admin';

export interface RouteSettings {
  exporter: Exporter;
  health: HealthProbe;
  telemetryPath: string;
  logger: Logger;
  versionText: string;
  auth?: BasicAuthChecker;
  /** Which endpoints basic auth covers: everything (exporter-toolkit) or only /reload, /explain, /stat. */
  authScope: AuthScope;
  headers: Record<string, string>;
}

const plain = 'text/plain; charset=utf-8';
const adminPaths = new Set<string>([ExporterPaths.reload, ExporterPaths.explain, ExporterPaths.stat]);

/** Paths whose answer depends only on the cached probe state, and what makes them 200. */
const healthRoutes: Array<{ paths: string[]; check: 'up' | 'primary' | 'replica' }> = [
  { paths: [ExporterPaths.up, ExporterPaths.health, ExporterPaths.liveness, ExporterPaths.readiness, ExporterPaths.read], check: 'up' },
  { paths: [ExporterPaths.primary, ...ExporterPaths.primaryAliases], check: 'primary' },
  { paths: [ExporterPaths.replica, ...ExporterPaths.replicaAliases], check: 'replica' },
];

/**
 * The exporter's HTTP API. Health answers come from the cached state only (body = state word);
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
    auth.check(req.headers.authorization).then(
      (ok) => {
        if (ok) return next();
        res.status(401).setHeader('WWW-Authenticate', 'Basic').type(plain).send('Unauthorized\n');
      },
      next,
    );
  });

  app.get(settings.telemetryPath, (req, res, next) => {
    exporter.scrape().then((body) => sendBody(res, body), next);
  });

  for (const route of healthRoutes) {
    app.get(route.paths, (_req, res) => {
      const state = health.state;
      let status: number;
      if (!isAvailable(state)) status = 503;
      else if (route.check === 'up') status = 200;
      else status = (route.check === 'primary') === (state === 'primary') ? 200 : 404;
      res.status(status).type(plain).send(state);
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
      res.status(500).type(plain).send(`fail to reload: ${(error as Error).message}`);
    }
  });

  app.get(ExporterPaths.explain, (_req, res) => {
    res.status(200).type(plain).send(explainText(exporter.main.installed().map((r) => r.collector)));
  });

  app.get(ExporterPaths.stat, (_req, res) => {
    res.status(200).type(plain).send(statText(exporter.main.installed()));
  });

  app.get(ExporterPaths.version, (_req, res) => {
    res.status(200).type(plain).send(settings.versionText);
  });

  app.get('/', (_req, res) => {
    res.status(200).type('html').send(`<html><head><title>PG Exporter</title></head><body><h1>PG Exporter</h1><p><a href="${settings.telemetryPath}">Metrics</a></p></body></html>`);
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

/**
 * The listener: unauthenticated GETs of the metrics path are answered here, everything else by
 * the express app. Express' routing and the per-request child logger cost a fifth of a cached
 * scrape; the answer (status, headers, X-Request-ID, body) is the same as the app's.
 */
export function createExporterListener(settings: RouteSettings, app: Express = createExporterApp(settings)): RequestListener {
  const fast = !settings.auth?.enabled || settings.authScope === 'admin';
  const path = settings.telemetryPath;
  const headers = Object.entries(settings.headers);
  const debug = settings.logger.isLevelEnabled('debug');
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    if (!fast || debug || req.method !== 'GET' || (url !== path && !url.startsWith(`${path}?`))) {
      app(req, res);
      return;
    }
    for (const [name, value] of headers) res.setHeader(name, value);
    res.setHeader('X-Request-ID', requestIdFrom(req));
    settings.exporter.scrape().then(
      (body) => sendBody(res, body),
      (error: Error) => {
        settings.logger.error({ err: error.message }, 'request failed');
        res.writeHead(500, { 'Content-Type': plain });
        res.end(`internal error: ${error.message}`);
      },
    );
  };
}
