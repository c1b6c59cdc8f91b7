import type { NextFunction, Request, Response } from 'express';

/**
 * CORS for a front end served from another origin. Only listed origins get the headers; a
 * preflight from them is answered here with 204. Bearer tokens travel in a header, so no
 * credentials mode is needed.
 */
export function cors(allowedOrigins: readonly string[]) {
  const any = allowedOrigins.includes('*');
  const allowed = new Set(allowedOrigins);
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (!origin || (!any && !allowed.has(origin))) {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', 'X-Request-ID');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
      const requested = req.headers['access-control-request-headers'];
      // Echo what the client asks for (Authorization, Content-Type, X-Request-Id, X-Lang, apifoxToken...), restricted to token characters.
      res.setHeader(
        'Access-Control-Allow-Headers',
        typeof requested === 'string' && /^[A-Za-z0-9_, -]{1,500}$/.test(requested) ? requested : 'Authorization, Content-Type, X-Request-Id, X-Lang',
      );
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}
