import type { Request, Response } from 'express';
import type { Envelope } from './envelope.js';
import type { JsonText } from './respond.js';

/** public: no token; auth: token only; permission: token plus the API permission check. */
export type Guard = 'public' | 'auth' | 'permission';
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface CodeRequirement {
  codes: string[];
  requireAll?: boolean;
}

/** An envelope, envelope text already rendered, or undefined when the handler answered itself. */
export type RouteHandler = (req: Request, res: Response) => Promise<Envelope | JsonText | undefined>;

export interface RouteDef {
  method: Method;
  /** Template relative to the router prefix, with `{name}` parameters and no trailing slash. */
  path: string;
  summary: string;
  tags: string[];
  guard: Guard;
  buttons?: CodeRequirement;
  roles?: CodeRequirement;
  /** Answered even while the caller must change their password (2108 otherwise). */
  openDuringPasswordChange?: boolean;
  handler: RouteHandler;
}

export interface RouteOptions {
  summary: string;
  guard?: Guard;
  buttons?: CodeRequirement;
  roles?: CodeRequirement;
  tags?: string[];
  openDuringPasswordChange?: boolean;
}

/** A registered route with its full template, as the permission check and the API table see it. */
export interface MountedRoute extends RouteDef {
  template: string;
}

/**
 * Collects routes with their metadata (summary, tags, guard, button and role requirements) so the
 * app can mount them in the right order and reconcile the API table with them.
 */
export class ApiRouter {
  readonly routes: RouteDef[] = [];

  constructor(
    readonly prefix: string,
    readonly defaults: { guard: Guard; tags: string[] },
  ) {}

  add(method: Method, path: string, options: RouteOptions, handler: RouteHandler): this {
    if (path.endsWith('/') && path !== '/') throw new Error(`route ${method} ${path}: no trailing slash`);
    this.routes.push({
      method,
      path,
      summary: options.summary,
      tags: options.tags ?? this.defaults.tags,
      guard: options.guard ?? this.defaults.guard,
      buttons: options.buttons,
      roles: options.roles,
      openDuringPasswordChange: options.openDuringPasswordChange,
      handler,
    });
    return this;
  }

  get(path: string, options: RouteOptions, handler: RouteHandler): this {
    return this.add('get', path, options, handler);
  }
  post(path: string, options: RouteOptions, handler: RouteHandler): this {
    return this.add('post', path, options, handler);
  }
  patch(path: string, options: RouteOptions, handler: RouteHandler): this {
    return this.add('patch', path, options, handler);
  }
  put(path: string, options: RouteOptions, handler: RouteHandler): this {
    return this.add('put', path, options, handler);
  }
  delete(path: string, options: RouteOptions, handler: RouteHandler): this {
    return this.add('delete', path, options, handler);
  }

  /**
   * Full templates in mount order: paths without `{...}` first, so a parameter route never
   * shadows a static sibling such as `/tree`.
   */
  mounted(): MountedRoute[] {
    const join = (path: string): string => (path === '' || path === '/' ? this.prefix : `${this.prefix}${path}`);
    const all = this.routes.map((r) => ({ ...r, template: join(r.path) }));
    return [...all.filter((r) => !r.template.includes('{')), ...all.filter((r) => r.template.includes('{'))];
  }
}

/** `/users/{id}/menus` → `/users/:id/menus` for express. */
export function toExpressPath(template: string): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/** A path parameter as a string (express 5 gives strings for named parameters). */
export function param(req: Request, name: string): string {
  const value = (req.params as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}
