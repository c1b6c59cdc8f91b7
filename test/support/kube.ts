import * as k8s from '@kubernetes/client-node';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createLogger } from '../../lib/log.js';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../../local/apiserver/server.js';

export type TestApiServer = RunningApiServer & { kubeConfig: k8s.KubeConfig };

/**
 * A throwaway Kubernetes API server stand-in (HTTPS, free loopback port, temp dir) with a
 * client-node KubeConfig loaded from the kubeconfig file it wrote. Call close() in `after`.
 */
export async function startTestApiServer(options: ApiServerOptions = {}): Promise<TestApiServer> {
  const server = await startApiServer({ logger: quietLogger(), ...options });
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  return Object.assign(server, { kubeConfig });
}

/**
 * A KubeConfig for the same server under another identity, e.g. to refuse one client: a bearer
 * token (a string) or a client certificate with the given CN (`{ commonName }`, HTTPS only).
 */
export function kubeConfigAs(server: RunningApiServer, identity: string | { commonName: string }, path: string): k8s.KubeConfig {
  server.writeKubeconfig(path, typeof identity === 'string' ? { token: identity } : identity);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** A MicroTime value for Lease fields, as client-node expects (`new V1MicroTime()`). */
export function microTime(date = new Date()): k8s.V1MicroTime {
  return new k8s.V1MicroTime(date.getTime());
}

/** Server logs are noise in test output unless LOG_LEVEL asks for them. */
function quietLogger() {
  return createLogger({ name: 'local-apiserver', level: process.env.LOG_LEVEL ?? 'warn' });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: unknown;
}

/** One raw HTTP request to the stand-in (to send exact content types, bodies and headers). */
export async function kubeRequest(
  server: RunningApiServer,
  method: string,
  path: string,
  options: { body?: unknown; contentType?: string; accept?: string; token?: string } = {},
): Promise<RawResponse> {
  const request = server.url.startsWith('https') ? httpsRequest : httpRequest;
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise<RawResponse>((resolve, reject) => {
    const req = request(
      new URL(path, server.url),
      {
        method,
        ca: server.caCert,
        headers: {
          Authorization: `Bearer ${options.token ?? server.token}`,
          Accept: options.accept ?? 'application/json',
          ...(payload !== undefined ? { 'Content-Type': options.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res: import('node:http').IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
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

/** Opens a raw watch and collects its events until stop() (or the server ends it). */
export async function openWatch(server: RunningApiServer, path: string, options: { accept?: string; token?: string } = {}): Promise<{
  status: number;
  events: Array<{ type: string; object: Record<string, unknown> }>;
  ended: Promise<void>;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  stop(): void;
}> {
  const request = server.url.startsWith('https') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const events: Array<{ type: string; object: Record<string, unknown> }> = [];
    const waiters: Array<() => void> = [];
    let endResolve: () => void = () => {};
    const ended = new Promise<void>((r) => (endResolve = r));
    const req = request(new URL(path, server.url), { method: 'GET', ca: server.caCert, headers: { Authorization: `Bearer ${options.token ?? server.token}`, Accept: options.accept ?? 'application/json' } }, (res: import('node:http').IncomingMessage) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) events.push(JSON.parse(line) as { type: string; object: Record<string, unknown> });
        }
        for (const w of waiters.splice(0)) w();
      });
      const finish = (): void => {
        endResolve();
        for (const w of waiters.splice(0)) w();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      resolve({
        status: res.statusCode ?? 0,
        events,
        ended,
        async waitFor(count, timeoutMs = 5000) {
          const deadline = Date.now() + timeoutMs;
          while (events.length < count) {
            if (Date.now() > deadline) throw new Error(`watch ${path}: expected ${count} events, got ${events.length}: ${JSON.stringify(events.map((e) => e.type))}`);
            await new Promise<void>((r) => {
              waiters.push(r);
              setTimeout(r, 100);
            });
          }
        },
        stop() {
          req.destroy();
        },
      });
    });
    req.on('error', (err: Error) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
}
