import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { http, https } from './builtins.js';
import type { Logger } from './log.js';

/**
 * The HTTP server every program listens with, and the request id it echoes. Nothing here loads
 * express: a program that answers without it (the exporter) does not pay its memory.
 */
declare module 'http' {
  interface IncomingMessage {
    /** Request id: the caller's X-Request-ID when it is sane, otherwise a fresh UUID. */
    id?: string;
    /** Child logger carrying reqId. */
    log?: Logger;
  }
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes a caller's request id only when it is short and printable, so logs cannot be forged. */
export function requestIdFrom(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value && requestIdPattern.test(value) ? value : randomUUID();
}

export interface TlsFiles {
  cert: string | Buffer;
  key: string | Buffer;
  ca?: string | Buffer;
  /** Ask clients for a certificate (verified against `ca`); with rejectUnauthorized, refuse those without a valid one. */
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
  minVersion?: 'TLSv1.2' | 'TLSv1.3';
}

export interface ServeOptions {
  host: string;
  port: number;
  logger: Logger;
  /** How long in-flight requests may take after a stop begins, in ms (default 10 s). */
  shutdownTimeoutMs?: number;
  tls?: TlsFiles;
  /** Install SIGTERM/SIGINT handlers that stop the server gracefully (default false). */
  handleSignals?: boolean;
}

export interface RunningServer {
  server: Server;
  host: string;
  port: number;
  url: string;
  /** Stops accepting, lets in-flight requests finish, then closes what is left within the bound. */
  close(): Promise<void>;
}

export async function serve(handler: RequestListener, options: ServeOptions): Promise<RunningServer> {
  const server: Server = options.tls ? https().createServer({ ...options.tls }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const scheme = options.tls ? 'https' : 'http';
  const hostForUrl = address.address.includes(':') ? `[${address.address}]` : address.address;
  const timeout = options.shutdownTimeoutMs ?? 10_000;
  let closing: Promise<void> | undefined;

  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        options.logger.warn({ timeoutMs: timeout }, 'shutdown bound reached; closing remaining connections');
        server.closeAllConnections();
      }, timeout);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };

  if (options.handleSignals) {
    const onSignal = (signal: NodeJS.Signals): void => {
      options.logger.info({ signal }, 'stopping');
      void close().then(() => process.exit(0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  options.logger.info({ url: `${scheme}://${hostForUrl}:${address.port}` }, 'listening');
  return { server, host: address.address, port: address.port, url: `${scheme}://${hostForUrl}:${address.port}`, close };
}
