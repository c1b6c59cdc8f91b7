import { authorizationHeader, type ApiCredentials } from '../ops/auth.js';

/** A reply from a member's REST API. */
export interface ApiReply {
  status: number;
  text: string;
}

/** Failure to reach any member: exit code 3, distinct from a refused operation (1). */
export class UnreachableError extends Error {}

/** Refusal by the API (non-2xx), carrying the member's text for the user. */
export class OperationError extends Error {
  constructor(readonly status: number, text: string) {
    super(text);
  }
}

export interface ClientOptions {
  credentials?: ApiCredentials;
  timeoutMs: number;
}

/** Strips the node-document path from an api_url ("http://h:8008/ha" → "http://h:8008"). */
export function apiBase(apiUrl: string): string {
  const url = new URL(apiUrl);
  return `${url.protocol}//${url.host}`;
}

/** Plain HTTP calls to one member, with the credentials for mutating requests. */
export async function callMember(base: string, method: string, path: string, body: unknown, options: ClientOptions): Promise<ApiReply> {
  const headers: Record<string, string> = {};
  const auth = authorizationHeader(options.credentials);
  if (auth && method !== 'GET') headers.Authorization = auth;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  try {
    const response = await fetch(`${base}${path}`, { method, headers, body: payload, signal: AbortSignal.timeout(options.timeoutMs) });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    throw new UnreachableError(`cannot reach ${base}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`);
  }
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
