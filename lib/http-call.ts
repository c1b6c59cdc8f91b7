import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { http, https } from './builtins.js';

/**
 * One bounded HTTP(S) request with its answer as text. Unlike fetch it takes a CA and the name to
 * verify per call: a member is dialled by its address while its certificate is checked against the
 * name it carries (`servername`), and the trust is the cluster's CA, not the system store.
 */

export interface CallTls {
  /** PEM bundle the server's certificate must chain to; absent: the system store. */
  ca?: string | Buffer;
  /** The name the certificate must carry (also sent as SNI); absent: the URL's host. */
  servername?: string;
  /** A client certificate and its key, presented when the server asks. */
  cert?: string | Buffer;
  key?: string | Buffer;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** For https URLs. */
  tls?: CallTls;
  /** Longest answer read (default 4 MiB); a longer one fails the call. */
  maxBytes?: number;
}

export interface CallAnswer {
  status: number;
  body: string;
}

export function callUrl(url: string, options: CallOptions): Promise<CallAnswer> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') return Promise.reject(new Error(`unsupported URL scheme ${target.protocol}`));
  const maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
  const tls = options.tls ?? {};
  const servername = tls.servername && !isIP(tls.servername) ? { servername: tls.servername } : {};
  const tlsOptions = secure ? { ...servername, ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}) } : {};
  return new Promise((resolve, reject) => {
    const send = secure ? https().request : http.request;
    const req = send(target, { method: options.method ?? 'GET', headers, agent: false, ...tlsOptions }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) req.destroy(new Error(`answer longer than ${maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    timer.unref();
    req.on('close', () => clearTimeout(timer));
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(options.body);
  });
}
