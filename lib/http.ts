import type { IncomingMessage } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from './log.js';
import { requestIdFrom } from './httpserver.js';

export { requestIdFrom, serve, type RunningServer, type ServeOptions, type TlsFiles } from './httpserver.js';

const parentLogger = Symbol('parentLogger');
const childLogger = Symbol('childLogger');
type LoggedRequest = IncomingMessage & { [parentLogger]?: Logger; [childLogger]?: Logger };

// `req.log` is made on first use: most requests never log, and a pino child costs a serialization of
// its bindings (with redaction) each time. Requests that requestContext did not see have none, as before.
// Defined on express.request, the prototype express documents for extending its requests (every
// app's request prototype inherits from it), rather than on Node's IncomingMessage.
Object.defineProperty(express.request, 'log', {
  configurable: true,
  get(this: LoggedRequest): Logger | undefined {
    return (this[childLogger] ??= this[parentLogger]?.child({ reqId: this.id }));
  },
  set(this: LoggedRequest, value: Logger | undefined) {
    this[childLogger] = value;
  },
});

/** Express middleware: request id (echoed as X-Request-ID), child logger, one log line per request at debug level. */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = requestIdFrom(req);
    req.id = id;
    (req as LoggedRequest)[parentLogger] = logger;
    res.setHeader('X-Request-ID', id);
    if (logger.isLevelEnabled('debug')) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        req.log?.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 100) / 100 }, 'request');
      });
    }
    next();
  };
}

/** An express app with the request-context middleware and no x-powered-by header. */
export function createApp(logger: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(logger));
  return app;
}
