import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkAuthorization, type ApiCredentials } from '../../ops/auth.js';
import type { Reply } from '../../ops/texts.js';

/** Largest request body the mutating endpoints read; a dynamic configuration is far smaller. */
export const maxBodyBytes = 128 * 1024;

export type BodyResult = { ok: true; value: unknown } | { ok: false; reply: Reply };

/**
 * Reads and parses a JSON body without express.json(), so oversized bodies get 413 and bad JSON
 * 400 from here rather than a 500 from the app's error handler. An empty body reads as undefined.
 */
export function readJsonBody(req: Request, limit = maxBodyBytes): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve({ ok: false, reply: { code: 413, text: `Request body larger than ${limit} bytes` } });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult): void => {
      if (done) return;
      done = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        finish({ ok: false, reply: { code: 413, text: `Request body larger than ${limit} bytes` } });
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => finish({ ok: false, reply: { code: 400, text: 'Bad request: could not read the body' } }));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (text === '') return finish({ ok: true, value: undefined });
      try {
        finish({ ok: true, value: JSON.parse(text) as unknown });
      } catch {
        finish({ ok: false, reply: { code: 400, text: 'Bad request: the body is not valid JSON' } });
      }
    });
  });
}

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
    const schemes = [credentials?.password !== undefined ? 'Basic realm="keelson"' : '', credentials?.token !== undefined ? 'Bearer realm="keelson"' : ''].filter(Boolean);
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
