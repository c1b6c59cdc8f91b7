import * as k8s from '@kubernetes/client-node';
import { request as httpRequest, type IncomingMessage } from 'node:http';
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

/** Where a raw request goes: the stand-in, or any server with a bearer token (the oracle). */
export interface KubeEndpoint {
  url: string;
  token: string;
  caCert?: string;
}

export interface RawResponse<Body = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: Body;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
  token?: string;
}

function send(server: KubeEndpoint, method: string, path: string, token: string | undefined, headers: Record<string, string | number>) {
  const request = server.url.startsWith('https') ? httpsRequest : httpRequest;
  return (onResponse: (res: IncomingMessage) => void) =>
    request(new URL(path, server.url), { method, ca: server.caCert, headers: { Authorization: `Bearer ${token ?? server.token}`, ...headers } }, onResponse);
}

/** One raw HTTP request (to send exact content types, bodies and headers). */
export async function kubeRequest(server: KubeEndpoint, method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
  const payload =
    options.body === undefined ? undefined : typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
  const headers = {
    Accept: options.accept ?? 'application/json',
    ...(payload !== undefined ? { 'Content-Type': options.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
  };
  return new Promise<RawResponse>((resolve, reject) => {
    const req = send(
      server,
      method,
      path,
      options.token,
      headers,
    )((res) => {
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
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** kubeRequest with the body as a JSON object ({} when the answer is not one): Status fields read directly. */
export async function kubeJson(
  server: KubeEndpoint,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<RawResponse<Record<string, unknown>>> {
  const res = await kubeRequest(server, method, path, options);
  const body = typeof res.body === 'object' && res.body !== null && !Array.isArray(res.body) ? (res.body as Record<string, unknown>) : {};
  return { ...res, body };
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

/** Opens a raw watch (path includes ?watch=1...) and collects its events until stop() (or the server ends it). */
export async function openWatch(server: KubeEndpoint, path: string, options: { accept?: string; token?: string } = {}): Promise<RawWatch> {
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = [];
    const waiters: Array<() => void> = [];
    let endResolve: () => void = () => {};
    const ended = new Promise<void>((r) => (endResolve = r));
    const req = send(server, 'GET', path, options.token, { Accept: options.accept ?? 'application/json' })((res) => {
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
        async waitFor(count, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          while (events.length < count) {
            if (Date.now() > deadline)
              throw new Error(
                `watch ${path}: expected ${count} events, got ${JSON.stringify(events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`))}`,
              );
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
