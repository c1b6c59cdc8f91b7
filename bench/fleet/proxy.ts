/**
 * A counting proxy between the operator and the API server: plain HTTP on loopback in front of
 * the server's HTTPS, adding the operator's bearer token. It sees exactly the operator's requests
 * (the benchmark's own traffic goes straight to the server), so both the stand-in and a real
 * kube-apiserver are measured the same way. Watches are streamed through.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';

export type RequestClass = 'watch' | 'get' | 'list' | 'discovery' | 'write';

export interface Tally {
  watch: number;
  get: number;
  list: number;
  discovery: number;
  write: number;
  /** Successful creates (201) other than Events: owned objects the operator made. */
  created: number;
  /** LISTs naming a resourceVersion other than "" or "0": served from the API server's watch cache, no older than it. */
  listAtVersion: number;
}

export const emptyTally = (): Tally => ({ watch: 0, get: 0, list: 0, discovery: 0, write: 0, created: 0, listAtVersion: 0 });

/** A LIST that names a version it must not be older than (pure). */
export function namesVersion(url: string): boolean {
  const version = new URLSearchParams(url.split('?')[1] ?? '').get('resourceVersion');
  return version !== null && version !== '' && version !== '0';
}

/** What one request is, from its method and URL (pure). */
export function classify(method: string, url: string): RequestClass {
  const [path = '', query = ''] = url.split('?');
  if (method !== 'GET') return 'write';
  if (/(^|&)watch=(true|1)/.test(query)) return 'watch';
  const parts = path.split('/').filter((p) => p.length > 0);
  // /api/v1 | /apis | /apis/<group>/<version>: discovery documents.
  if ((parts[0] === 'api' && parts.length <= 2) || (parts[0] === 'apis' && parts.length <= 3)) return 'discovery';
  const rest = parts.slice(parts[0] === 'api' ? 2 : 3);
  const scoped = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest;
  return scoped.length >= 2 ? 'get' : 'list';
}

export interface CountingProxy {
  url: string;
  tally: Tally;
  reset(): Tally;
  close(): Promise<void>;
}

export async function startCountingProxy(upstream: string, token: string, caCert: string | undefined): Promise<CountingProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, ca: caCert, maxSockets: 256 });
  let tally = emptyTally();
  const server: Server = createServer((req: IncomingMessage, res) => {
    const kind = classify(req.method ?? 'GET', req.url ?? '/');
    tally[kind] += 1;
    if (kind === 'list' && namesVersion(req.url ?? '')) tally.listAtVersion += 1;
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${token}` };
    const upstreamRequest = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers, agent }, (answer) => {
      if (req.method === 'POST' && answer.statusCode === 201 && !/\/events(\?|$)/.test(req.url ?? '')) tally.created += 1;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
    });
    upstreamRequest.on('error', () => res.destroy());
    // A client that hangs up (a watch stopped) ends the upstream stream too.
    res.on('close', () => {
      if (!res.writableFinished) upstreamRequest.destroy();
    });
    req.pipe(upstreamRequest);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get tally() {
      return tally;
    },
    reset() {
      const previous = tally;
      tally = emptyTally();
      return previous;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
