import type { NextFunction, Request, Response } from 'express';
import type { TLSSocket } from 'node:tls';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Patroni's verify_client for the mutating endpoints: with `optional` the handshake asks for a
 * certificate without requiring one, and a POST/PUT/PATCH/DELETE whose connection presented none
 * the client CA verifies is refused with 403 before its route runs (the credentials are checked
 * as well, by the route). Reads stay open for probes and peers. With `required` the handshake
 * itself already refused such a client.
 */
export function clientCertificateGate(req: Request, res: Response, next: NextFunction): void {
  if (safeMethods.has(req.method)) return next();
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted && socket.authorized === true) return next();
  req.log?.warn(
    { path: req.path, method: req.method, reason: socket.authorizationError ? String(socket.authorizationError) : 'none presented' },
    'refused: no verified client certificate',
  );
  res.status(403).type('text/plain; charset=utf-8').send('client certificate required');
}
