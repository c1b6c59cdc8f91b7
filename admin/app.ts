import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createApp } from '../lib/http.js';
import { AdminPaths } from '../lib/ports.js';
import { Code, defaultMessage } from './http/codes.js';
import { cors } from './http/cors.js';
import { currentContext, newContext, runWithContext } from './http/context.js';
import { BizError, failure, type Envelope } from './http/envelope.js';
import { heldForPasswordChange, isOwnPasswordEdit, USER_UPDATE_TEMPLATE, type PasswordChangeEnforcement } from './auth/password-change-hold.js';
import { checkApiPermission, checkButtons, checkRoles } from './auth/permissions.js';
import { JsonText, sendJson } from './http/respond.js';
import { requestLocale, UI_LANGUAGE_HEADER } from './i18n/locale.js';
import { localiseMessage } from './i18n/messages.js';
import { staticRoutes } from './http/static-routes.js';
import { param, toExpressPath, type ApiRouter, type MountedRoute } from './http/router.js';
import type { AdminServices } from './services.js';

// PostgreSQL unique constraints → the duplicate codes the front end knows.
const duplicateCodes: Record<string, string> = {
  users_user_name_key: Code.DUPLICATE_USER_NAME,
  users_user_email_key: Code.DUPLICATE_USER_EMAIL,
  users_user_phone_key: Code.DUPLICATE_USER_PHONE,
  roles_role_code_key: Code.DUPLICATE_ROLE_CODE,
  menus_route_path_key: Code.DUPLICATE_MENU_ROUTE,
};

interface PgError {
  code?: string;
  constraint?: string;
  detail?: string;
}

/** Turns any thrown value into an envelope; only unexpected errors are logged with their stack. */
export function errorToEnvelope(error: unknown, req: Request): { status: number; body: ReturnType<typeof failure> } {
  if (error instanceof BizError) return { status: error.httpStatus, body: failure(error.code, error.message) };
  const e = error as PgError & { type?: string; status?: number; expose?: boolean; message?: string };
  if (e.type === 'entity.parse.failed') return { status: 200, body: failure(Code.VALIDATION, 'request body is not valid JSON') };
  if (e.type === 'entity.too.large') return { status: 200, body: failure(Code.VALIDATION, 'request body too large') };
  if (typeof e.type === 'string' && e.status && e.status < 500) return { status: 200, body: failure(Code.VALIDATION, e.message ?? 'bad request') };
  // A path parameter that is not valid percent-encoding (the router's decode throws a URIError).
  if (error instanceof URIError) return { status: 200, body: failure(Code.VALIDATION, 'path: a parameter is not valid percent-encoding') };
  // body-parser turns a stream error (a body that does not decode as its Content-Encoding says) into a 400.
  if (e.expose === true && e.status && e.status >= 400 && e.status < 500)
    return { status: 200, body: failure(Code.VALIDATION, 'request body could not be decoded as its Content-Encoding says') };
  if (e.code === '23505') {
    const code = (e.constraint && duplicateCodes[e.constraint]) ?? Code.DUPLICATE_RESOURCE;
    return { status: 200, body: failure(code, e.detail ? `already exists: ${e.detail.replace(/^Key /, '')}` : undefined) };
  }
  if (e.code === '23503') return { status: 200, body: failure(Code.INTEGRITY, 'a referenced resource does not exist or is still in use') };
  if (e.code === '22P02' || e.code === '22001' || e.code === '22003')
    return { status: 200, body: failure(Code.VALIDATION, 'a value has the wrong format or is too long') };
  req.log?.error({ err: error }, 'unhandled error');
  return { status: 200, body: failure(Code.INTERNAL, 'internal server error') };
}

/** The envelope with its `msg` in the request's language (the UI's X-Lang, else Accept-Language); other bodies as they are. */
export function inRequestLocale<T>(body: T, req: Request): T {
  if (body instanceof JsonText || typeof body !== 'object' || body === null) return body;
  const envelope = body as unknown as Envelope;
  if (typeof envelope.msg !== 'string' || typeof envelope.code !== 'string') return body;
  const msg = localiseMessage(envelope.msg, envelope.code, requestLocale(req.headers[UI_LANGUAGE_HEADER], req.headers['accept-language']));
  return msg === envelope.msg ? body : ({ ...envelope, msg } as T);
}

/** Wraps a route's handler with its guards: authentication, API permission, roles, buttons. */
function guarded(route: MountedRoute, services: AdminServices) {
  return async (req: Request, res: Response): Promise<void> => {
    const started = process.hrtime.bigint();
    let code: string = Code.OK;
    try {
      await runGuardsAndHandler(route, services, req, res);
    } catch (error) {
      code = error instanceof BizError ? error.code : Code.INTERNAL;
      throw error;
    } finally {
      services.metrics.observe(route.method, route.template, code, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}

async function runGuardsAndHandler(route: MountedRoute, services: AdminServices, req: Request, res: Response): Promise<void> {
  const ctx = currentContext();
  if (route.guard !== 'public') {
    const principal = await services.authenticator.authenticate(req.headers.authorization, ctx);
    // An impersonator is not the account holder: the password they would have to change is not theirs.
    if (principal.user.mustChangePassword && ctx.CTX_IMPERSONATOR_ID === undefined) {
      const target = route.template === USER_UPDATE_TEMPLATE ? services.ids.tryDecode(param(req, 'id')) : undefined;
      const ownEdit = isOwnPasswordEdit(route, target, principal.user.id, req.body);
      // The config key's schema admits only the three modes.
      if (heldForPasswordChange(services.config.passwordChangeEnforcement as PasswordChangeEnforcement, route, ownEdit)) {
        throw new BizError(Code.PASSWORD_CHANGE_REQUIRED, defaultMessage[Code.PASSWORD_CHANGE_REQUIRED]);
      }
    }
    // The first denial in this order counts: API permission, roles, buttons.
    const denial =
      (route.guard === 'permission' ? checkApiPermission(ctx.CTX_ROLE_CODES, principal.grants, route.method, route.template) : undefined) ??
      (route.roles ? checkRoles(ctx.CTX_ROLE_CODES, route.roles.codes, route.roles.requireAll) : undefined) ??
      (route.buttons ? checkButtons(ctx.CTX_ROLE_CODES, ctx.CTX_BUTTON_CODES, route.buttons.codes, route.buttons.requireAll) : undefined);
    if (denial) {
      services.audit.record('permission.denied', 'warn', {
        userId: ctx.CTX_USER_ID,
        method: route.method,
        template: route.template,
        resultCode: denial.code,
        requestId: ctx.CTX_X_REQUEST_ID,
      });
      throw new BizError(denial.code, denial.msg);
    }
  }
  const result = await route.handler(req, res);
  if (!res.headersSent) sendJson(res, inRequestLocale(result ?? { code: Code.OK, msg: 'OK', data: null }, req));
}

export interface BuiltApp {
  app: Express;
  routes: MountedRoute[];
}

/** The express app: request id and context, JSON bodies, every router's routes, envelope errors. */
export function buildApp(services: AdminServices, routers: ApiRouter[]): BuiltApp {
  const app = createApp(services.logger);
  if (services.config.trustProxy) app.set('trust proxy', true);
  if (services.config.corsOrigins.length) app.use(cors(services.config.corsOrigins));
  // Bodies are read before the request context is entered: the context then covers everything after,
  // with no need to carry it across the body's stream events.
  app.use(express.json({ limit: '1mb', strict: false }));
  app.use((req: Request, res: Response, next: NextFunction) => {
    const ctx = newContext(req.id ?? '');
    // Background tasks (CTX_BG_TASKS) run after the response has been sent; failures are logged only.
    // The finish listener is added with the first task, so requests without tasks allocate nothing for them.
    let tasks: (() => Promise<void> | void)[] | undefined;
    ctx.CTX_BG_TASKS = {
      add: (task) => {
        if (!tasks) {
          const queued: (() => Promise<void> | void)[] = (tasks = []);
          res.on('finish', () => {
            for (const queuedTask of queued) {
              Promise.resolve()
                .then(queuedTask)
                .catch((error: unknown) => req.log?.warn({ err: error }, 'background task failed'));
            }
          });
        }
        tasks.push(task);
      },
    };
    runWithContext(ctx, () => next());
  });
  // /healthz for Kubernetes probes, /health where fast-soy-admin's tooling looks.
  for (const path of [AdminPaths.health, AdminPaths.healthAlias]) {
    app.get(path, (_req, res) => {
      res.json({ status: 'ok' });
    });
  }
  app.get(AdminPaths.metrics, async (_req, res) => {
    res.setHeader('Content-Type', services.metrics.registry.contentType);
    res.send(await services.metrics.registry.metrics());
  });
  const routes: MountedRoute[] = [];
  const seen = new Set<string>();
  for (const router of routers) {
    for (const route of router.mounted()) {
      const key = `${route.method} ${route.template}`;
      if (seen.has(key)) throw new Error(`route registered twice: ${key}`);
      seen.add(key);
      routes.push(route);
    }
  }
  // Static templates first across all routers, so a parameter route never shadows a static one.
  const exact = routes.filter((r) => !r.template.includes('{')).map((route) => ({ route, handle: guarded(route, services) }));
  const withParams = routes.filter((r) => r.template.includes('{')).map((route) => ({ route, handle: guarded(route, services) }));
  app.use(staticRoutes(exact.map(({ route, handle }) => ({ method: route.method, template: route.template, handle }))));
  for (const { route, handle } of [...exact, ...withParams]) app[route.method](toExpressPath(route.template), handle);
  const ordered = [...exact, ...withParams].map(({ route }) => route);
  app.use((req: Request, res: Response) => {
    sendJson(res, inRequestLocale(failure(Code.NOT_FOUND, `no route ${req.method} ${req.path}`), req), 404);
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const { status, body } = errorToEnvelope(error, req);
    if (!res.headersSent) sendJson(res, inRequestLocale(body, req), status);
  });
  return { app, routes: ordered };
}
