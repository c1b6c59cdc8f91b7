import type { NextFunction, Request, Response } from 'express';

export interface StaticRoute {
  /** Lower-case method as the route table holds it. */
  method: string;
  /** A template without parameters: the exact path. */
  template: string;
  handle(req: Request, res: Response): Promise<void>;
}

/**
 * One map lookup for requests whose method and path are exactly a parameterless route, instead of
 * express testing the route layers one by one before reaching it (ADR 0207). Anything else — a
 * query-less path that differs in case or by a trailing slash, HEAD, OPTIONS, parameter routes —
 * goes on to the express routes, which stay registered for all routes and keep their semantics.
 * For an exact path express would pick the same route: static templates are mounted first and
 * each method and template is registered once.
 */
export function staticRoutes(routes: readonly StaticRoute[]) {
  const byKey = new Map<string, StaticRoute['handle']>();
  for (const route of routes) {
    if (route.template.includes('{')) throw new Error(`not a static route: ${route.template}`);
    byKey.set(`${route.method.toUpperCase()} ${route.template}`, route.handle);
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    const url = req.url;
    const query = url.indexOf('?');
    const handle = byKey.get(`${req.method} ${query < 0 ? url : url.slice(0, query)}`);
    if (!handle) {
      next();
      return;
    }
    req.params = {};
    handle(req, res).catch(next);
  };
}
