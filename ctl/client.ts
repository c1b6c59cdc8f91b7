import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { authorizationHeader, type ApiCredentials } from '../api/ha-node/credentials.js';
import { UnreachableError, OperationError } from './client-errors.js';
import { checkDirect, openTunnel, type MemberRoute } from './member-route.js';
import type { CaSource, MemberNames } from './member-tls.js';

export { UnreachableError, OperationError };

/** A reply from a member's REST API. */
export interface ApiReply {
  status: number;
  text: string;
}

/** Credentials looked up only when a request needs them (e.g. read from a Kubernetes Secret). */
export type CredentialSource = () => Promise<ApiCredentials | undefined>;

export interface ClientOptions {
  /** Sent on mutating requests only; a source is asked at the first such request. */
  credentials?: ApiCredentials | CredentialSource;
  timeoutMs: number;
  /** PEM bundle to trust for https member URLs (the cluster's CA), or where to read it when first needed. */
  ca?: CaSource;
  /** The names members' certificates carry, by address; without one the URL's host is checked. */
  names?: MemberNames;
  /** Skip certificate verification (testing only). */
  insecure?: boolean;
  /** How members are reached from here (member-route.ts); direct without checks when absent. */
  route?: MemberRoute;
}

/** Strips the node-document path from an api_url ("http://h:8008/ha" → "http://h:8008"). */
export function apiBase(apiUrl: string): string {
  const url = new URL(apiUrl);
  return `${url.protocol}//${url.host}`;
}

/** A source resolved once, however many requests ask (a Secret is read at most once per run). */
export function onceSource(source: CredentialSource): CredentialSource {
  let pending: Promise<ApiCredentials | undefined> | undefined;
  return () => (pending ??= source());
}

/**
 * One HTTP(S) call to a member, with the credentials on mutating requests. node:http(s) rather
 * than fetch so an https API with the cluster's own CA works (--cacert).
 */
export async function callMember(base: string, method: string, path: string, body: unknown, options: ClientOptions): Promise<ApiReply> {
  const url = new URL(path, `${base}/`);
  const headers: Record<string, string | number> = { Accept: 'application/json, text/plain' };
  if (method !== 'GET') {
    const credentials = typeof options.credentials === 'function' ? await options.credentials() : options.credentials;
    const auth = authorizationHeader(credentials);
    if (auth) headers.Authorization = auth;
  }
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(payload);
  }
  const https = url.protocol === 'https:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let tunnel: Socket | undefined;
  if (options.route?.proxy) tunnel = await openTunnel(options.route.proxy, host, Number(url.port || (https ? 443 : 80)), options.timeoutMs);
  else checkDirect(options.route, host);
  const ca = https && typeof options.ca === 'function' ? await options.ca() : typeof options.ca === 'string' ? options.ca : undefined;
  const servername = options.names?.serverName(host) ?? (isIP(host) ? undefined : host);
  const tls = https ? { ca, rejectUnauthorized: !options.insecure, ...(servername ? { servername } : {}) } : {};
  // Through a tunnel the request rides the CONNECT socket (TLS on top of it for https members). No
  // agent: node:http uses createConnection only without one (an agent would dial the address itself).
  const viaTunnel = tunnel ? { agent: undefined, createConnection: () => (https ? tlsConnect({ socket: tunnel, host, ...tls }) : tunnel) } : {};
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers, timeout: options.timeoutMs, ...tls, ...viaTunnel }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (error) => reject(new UnreachableError(`cannot reach ${base}: ${error.message}`)));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (error) => reject(new UnreachableError(`cannot reach ${base}: ${error.message}`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Parses a JSON reply or explains what came back instead. */
export function jsonOf<T>(reply: ApiReply, what: string): T {
  if (reply.status >= 300) throw new OperationError(reply.status, `${what}: HTTP ${reply.status}: ${reply.text}`);
  try {
    return JSON.parse(reply.text) as T;
  } catch {
    throw new OperationError(reply.status, `${what}: the reply is not JSON`);
  }
}
