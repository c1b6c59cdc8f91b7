/** Raw HTTP against either contract server: exact bodies, content types and watch streams. */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ContractServer } from './targets.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Record<string, unknown>;
}

export async function raw(
  server: ContractServer,
  method: string,
  path: string,
  options: { body?: unknown; contentType?: string; accept?: string } = {},
): Promise<RawResponse> {
  const send = server.url.startsWith('https') ? httpsRequest : httpRequest;
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = send(
      new URL(path, server.url),
      {
        method,
        ca: server.caCert,
        headers: {
          Authorization: `Bearer ${server.token}`,
          Accept: options.accept ?? 'application/json',
          ...(payload !== undefined ? { 'Content-Type': options.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON (e.g. "ok" from /readyz)
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export interface WatchEvent {
  type: string;
  object: Record<string, unknown> & { metadata?: { name?: string; resourceVersion?: string } };
}

export interface RawWatch {
  status: number;
  events: WatchEvent[];
  /** Resolves when the server ends the stream (or stop() is called). */
  ended: Promise<void>;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  stop(): void;
}

/** Opens a watch (path includes ?watch=1...) and collects its events until stop(). */
export async function rawWatch(server: ContractServer, path: string): Promise<RawWatch> {
  const send = server.url.startsWith('https') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = [];
    let finish: () => void = () => {};
    const ended = new Promise<void>((r) => (finish = r));
    const req = send(new URL(path, server.url), { method: 'GET', ca: server.caCert, headers: { Authorization: `Bearer ${server.token}`, Accept: 'application/json' } }, (res: IncomingMessage) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) events.push(JSON.parse(line) as WatchEvent);
        }
      });
      res.on('error', () => finish());
      res.on('end', () => finish());
      res.on('close', () => finish());
      resolve({
        status: res.statusCode ?? 0,
        events,
        ended,
        async waitFor(count, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          while (events.length < count) {
            if (Date.now() > deadline) throw new Error(`watch ${path}: expected ${count} events, got ${JSON.stringify(events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`))}`);
            await new Promise((r) => setTimeout(r, 50));
          }
        },
        stop: () => req.destroy(),
      });
    });
    req.on('error', (err: Error) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
}

/** Polls until check() returns a value (not undefined) or throws after timeoutMs with the last state. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
