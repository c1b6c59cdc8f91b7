import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { requestIdFrom } from '../../../lib/httpserver.js';
import type { Logger } from '../../../lib/log.js';
import { ExporterPaths } from '../../../lib/ports.js';
import { sendBody } from './body.js';
import type { Exporter } from '../exporter.js';
import { isAvailable, type HealthProbe, type TargetState } from './health.js';
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

export const plain = 'text/plain; charset=utf-8';
export const adminPaths = new Set<string>([ExporterPaths.reload, ExporterPaths.explain, ExporterPaths.stat]);

/** Paths whose answer depends only on the cached probe state, and what makes them 200. */
export const healthRoutes: Array<{ paths: string[]; check: 'up' | 'primary' | 'replica' }> = [
  { paths: [ExporterPaths.up, ExporterPaths.health, ExporterPaths.liveness, ExporterPaths.readiness, ExporterPaths.read], check: 'up' },
  { paths: [ExporterPaths.primary, ...ExporterPaths.primaryAliases], check: 'primary' },
  { paths: [ExporterPaths.replica, ...ExporterPaths.replicaAliases], check: 'replica' },
];

/** The status a health path answers with in the given probe state. */
export function healthStatus(check: 'up' | 'primary' | 'replica', state: TargetState): number {
  if (!isAvailable(state)) return 503;
  if (check === 'up') return 200;
  return (check === 'primary') === (state === 'primary') ? 200 : 404;
}

const healthChecks = new Map(healthRoutes.flatMap((route) => route.paths.map((path) => [path, route.check] as const)));

type AppLoader = (settings: RouteSettings) => Promise<RequestListener>;

const loadExpressApp: AppLoader = async (settings) => (await import('./app.js')).createExporterApp(settings);

/**
 * The listener. Unauthenticated GETs of the metrics path and GET/HEAD of the health paths and of
 * /version (what Prometheus and the kubelet send: the pods' liveness probe asks /version) are
 * answered here; everything else goes to the express app, loaded on first use. Express and its
 * dependencies are ~4 MB of the process's memory and its routing a fifth of a cached scrape; the
 * answers (status, headers, X-Request-ID, body) are the same as the app's.
 */
export function createExporterListener(settings: RouteSettings, loadApp: AppLoader = loadExpressApp): RequestListener {
  const fast = !settings.auth?.enabled || settings.authScope === 'admin';
  const path = settings.telemetryPath;
  const headers = Object.entries(settings.headers);
  const debug = settings.logger.isLevelEnabled('debug');
  let app: Promise<RequestListener> | undefined;
  const fail = (res: ServerResponse, error: Error): void => {
    settings.logger.error({ err: error.message }, 'request failed');
    if (res.headersSent) return;
    res.writeHead(500, { 'Content-Type': plain });
    res.end(`internal error: ${error.message}`);
  };
  const slow = (req: IncomingMessage, res: ServerResponse): void => {
    (app ??= loadApp(settings)).then(
      (listener) => listener(req, res),
      (error: Error) => fail(res, error),
    );
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const pathname = query < 0 ? url : url.slice(0, query);
    const check = pathname === path ? undefined : healthChecks.get(pathname);
    const version = pathname !== path && pathname === ExporterPaths.version;
    const textAnswer = check !== undefined || version;
    const method = req.method;
    if (!fast || debug || (pathname !== path && !textAnswer) || (method !== 'GET' && (!textAnswer || method !== 'HEAD'))) {
      slow(req, res);
      return;
    }
    for (const [name, value] of headers) res.setHeader(name, value);
    res.setHeader('X-Request-ID', requestIdFrom(req));
    if (textAnswer) {
      const state = settings.health.state;
      const body = check === undefined ? settings.versionText : state;
      res.writeHead(check === undefined ? 200 : healthStatus(check, state), { 'Content-Type': plain, 'Content-Length': Buffer.byteLength(body) });
      res.end(method === 'HEAD' ? undefined : body);
      return;
    }
    settings.exporter.scrape().then(
      (body) => sendBody(res, body),
      (error: Error) => fail(res, error),
    );
  };
}
