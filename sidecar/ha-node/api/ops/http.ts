import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkAuthorization, type ApiCredentials } from '../../../../api/ha-node/credentials.js';
import type { Reply } from '../../ops/texts.js';

/** Plain-text replies, as Patroni's action endpoints answer. Closes the connection after a 413. */
export function sendReply(res: Response, reply: Reply): void {
  if (reply.code === 413) res.setHeader('Connection', 'close');
  res.status(reply.code).type('text/plain; charset=utf-8').send(reply.text);
}

/** Guards a mutating route: 401 with a challenge when credentials are configured and not given. */
export function requireAuth(credentials: ApiCredentials | undefined): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const verdict = checkAuthorization(req.headers.authorization, credentials);
    if (verdict === 'ok') return next();
    req.log?.warn({ verdict, path: req.path, method: req.method }, 'refused unauthenticated request');
    const schemes = [
      credentials?.password !== undefined ? 'Basic realm="keelson"' : '',
      credentials?.token !== undefined ? 'Bearer realm="keelson"' : '',
    ].filter(Boolean);
    res.setHeader('WWW-Authenticate', schemes.join(', '));
    sendReply(res, { code: 401, text: verdict === 'missing' ? 'Authentication required' : 'Invalid credentials' });
  };
}

/** Wraps an async handler so a thrown error becomes a logged 500 text reply, never a crash. */
export function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res) => {
    fn(req, res).catch((error: unknown) => {
      req.log?.error({ err: error instanceof Error ? error.message : String(error) }, 'operation failed');
      if (!res.headersSent) sendReply(res, { code: 500, text: 'internal error' });
    });
  };
}
