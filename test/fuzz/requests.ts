import { deepNesting, hostileScalar, hostileValue, hugeBody, invalidJson, oddStrings, percentEncode, prototypeKeyBody } from './hostile-values.js';
import type { Random } from './random.js';
import type { RawAnswer, RawRequest } from './raw-http.js';

/**
 * Builds one hostile request for a target from its profile: a method, a path (sometimes mangled),
 * a query string, credentials (valid, missing or bad), a body and extra headers, each drawn from
 * the request's own random stream.
 */

export interface FuzzRequest extends RawRequest {
  /** What the request tries, for the report: e.g. "deep-nesting", "case:proto-config". */
  kind: string;
  /** Sent with valid credentials. */
  authenticated: boolean;
}

/** A hand-written request from a known defect class, with the answer the spec asks for. */
export interface KnownCase {
  name: string;
  build(rng: Random): Omit<FuzzRequest, 'kind'>;
  /** A problem with the answer, or undefined when it is right. */
  judge(answer: RawAnswer): string | undefined;
}

export interface FuzzProfile {
  /** Concrete paths the server serves (no query string). */
  paths: readonly string[];
  /** Query keys the server reads. */
  queryKeys: readonly string[];
  /** Well-shaped bodies whose fields get hostile values. */
  bodies: ReadonlyArray<Record<string, unknown>>;
  contentTypes: readonly string[];
  /** Headers carrying valid credentials. */
  validAuth(): Array<[string, string]>;
  /** Header values that must be refused: wrong passwords, forged tokens. */
  badAuth: ReadonlyArray<[string, string]>;
  knownCases: readonly KnownCase[];
  /** Methods this profile must not send with valid credentials (e.g. ones that would stream). */
  avoid?(request: FuzzRequest): boolean;
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const oddMethods = ['HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO', 'get', 'M-SEARCH', 'PURGE', 'X'.repeat(300), 'CONNECT', 'QUERY'];

function mangledPath(rng: Random, path: string): string {
  switch (rng.int(12)) {
    case 0:
      return `${path}/`;
    case 1:
      return `/${path}`;
    case 2:
      return `${path}/..${path}`;
    case 3:
      return `${path}%00`;
    case 4:
      return `${path}/%zz`;
    case 5:
      return `${path}/${'a'.repeat(rng.pick([256, 4096, 9000]))}`;
    case 6:
      return path.toUpperCase();
    case 7:
      return `${path}/%c0%af%2e%2e`;
    case 8:
      return `${path}/${percentEncode(rng.pick(oddStrings))}`;
    case 9:
      return path.replace(/\/[^/]*$/, `/${rng.text(1 + rng.int(30))}`);
    case 10:
      return `http://127.0.0.1${path}`;
    default:
      return `*`;
  }
}

function queryString(rng: Random, keys: readonly string[]): string {
  if (rng.chance(0.55)) return '';
  const parts: string[] = [];
  for (let i = 1 + rng.int(4); i > 0; i -= 1) {
    const key = rng.chance(0.8) && keys.length ? rng.pick(keys) : rng.pick(['__proto__[x]', 'a[b][c]', '', '%zz', 'x'.repeat(500), 'constructor']);
    const value = rng.chance(0.5)
      ? percentEncode(String(hostileScalar(rng)))
      : rng.pick(['', '%', '%00', '-1', 'abc', '99999999999999999999', 'true', '1e309', '%ff%fe']);
    parts.push(rng.chance(0.1) ? key : `${key}=${value}`);
  }
  if (rng.chance(0.05)) parts.push(...Array.from({ length: 2000 }, (_, i) => `p${i}=1`));
  return `?${parts.join('&')}`;
}

function mutatedBody(rng: Random, template: Record<string, unknown>): string {
  const body: Record<string, unknown> = structuredClone(template);
  const keys = Object.keys(body);
  for (let i = 1 + rng.int(3); i > 0 && keys.length; i -= 1) {
    const key = rng.pick(keys);
    if (rng.chance(0.15)) delete body[key];
    else body[key] = rng.chance(0.7) ? hostileScalar(rng) : hostileValue(rng);
  }
  if (rng.chance(0.1)) body[rng.text(6)] = hostileValue(rng);
  return JSON.stringify(body);
}

/** A body and its kind. */
function drawBody(rng: Random, profile: FuzzProfile): { kind: string; body: string } | undefined {
  const roll = rng.int(20);
  if (roll < 3) return undefined;
  if (roll < 9 && profile.bodies.length) return { kind: 'mutated-body', body: mutatedBody(rng, rng.pick(profile.bodies)) };
  if (roll < 12) return { kind: 'wrong-type', body: JSON.stringify(hostileValue(rng)) ?? 'null' };
  if (roll < 14) return { kind: 'invalid-json', body: rng.pick(invalidJson) };
  if (roll < 16) return { kind: 'deep-nesting', body: deepNesting(rng, rng.pick([100, 1000, 5000, 20_000, 100_000])) };
  if (roll < 18)
    return {
      kind: 'prototype-key',
      body: prototypeKeyBody(rng, profile.bodies.length && rng.chance(0.5) ? mutatedBody(rng, rng.pick(profile.bodies)) : '{"polluted":1}'),
    };
  return { kind: 'huge-body', body: hugeBody(rng) };
}

/** Extra headers: odd content types, duplicated or oversized headers, forwarded-for games. */
function abusiveHeaders(rng: Random): Array<[string, string]> {
  switch (rng.int(10)) {
    case 0:
      return [['X-Fill', 'x'.repeat(rng.pick([4096, 20_000]))]];
    case 1:
      return Array.from({ length: rng.pick([100, 500]) }, (_, i) => [`X-H${i}`, 'v'] as [string, string]);
    case 2:
      return [
        ['Content-Type', 'application/json'],
        ['Content-Type', 'text/plain'],
      ];
    case 3:
      return [['Transfer-Encoding', 'chunked, identity']];
    case 4:
      return [
        ['X-Forwarded-For', '10.0.0.1, 127.0.0.1'],
        ['X-Real-IP', '::1'],
      ];
    case 5:
      return [['Accept', '*/*;q=x, application/json;as=Table;v=v1;g=meta.k8s.io']];
    case 6:
      return [['Expect', '100-continue']];
    case 7:
      return [
        ['Origin', 'http://127.0.0.9'],
        ['Access-Control-Request-Method', 'DELETE'],
      ];
    default:
      return [['Content-Encoding', rng.pick(['gzip', 'deflate', 'br', 'bogus'])]];
  }
}

/** Request number index of a campaign (rng is that request's own stream). */
export function drawRequest(rng: Random, profile: FuzzProfile): FuzzRequest {
  if (profile.knownCases.length && rng.chance(0.08)) {
    const known = rng.pick(profile.knownCases);
    return { ...known.build(rng), kind: `case:${known.name}` };
  }
  const method = rng.chance(0.9) ? rng.pick(methods) : rng.pick(oddMethods);
  const path = rng.chance(0.85) ? rng.pick(profile.paths) : mangledPath(rng, rng.pick(profile.paths));
  const target = path + queryString(rng, profile.queryKeys);
  const headers: Array<[string, string]> = [];
  const authRoll = rng.int(10);
  const authenticated = authRoll < 6;
  if (authenticated) headers.push(...profile.validAuth());
  else if (authRoll < 9 && profile.badAuth.length) headers.push(rng.pick(profile.badAuth));
  const drawn = method === 'GET' && rng.chance(0.7) ? undefined : drawBody(rng, profile);
  if (drawn)
    headers.push([
      'Content-Type',
      rng.chance(0.8)
        ? rng.pick(profile.contentTypes)
        : rng.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', '']),
    ]);
  let kind = drawn?.kind ?? 'no-body';
  if (rng.chance(0.12)) {
    headers.push(...abusiveHeaders(rng));
    kind += '+headers';
  }
  const body = Buffer.from(drawn?.body ?? '', 'utf8');
  let contentLength: number | 'omit' | undefined;
  if (body.length > 0 && rng.chance(0.04)) {
    contentLength = rng.chance(0.5) ? 'omit' : rng.int(body.length);
    kind += '+length-mismatch';
  }
  const request: FuzzRequest = { method, target, headers, body, contentLength, kind, authenticated };
  if (profile.avoid?.(request))
    return { ...request, method: 'GET', target: profile.paths[0], body: Buffer.alloc(0), headers: [], contentLength: undefined, kind: 'avoided' };
  return request;
}

/** One line describing a request, enough to recognise it (the seed and index replay it exactly). */
/** The path a server routes a request target to: the absolute form (`http://host/path`) carries it after the authority. */
export function pathOf(target: string): string {
  const withoutQuery = target.split('?')[0];
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(withoutQuery);
  return absolute ? (absolute[1] ?? '/') : withoutQuery;
}

export function describeRequest(request: FuzzRequest): string {
  const body = request.body.length > 160 ? `${request.body.subarray(0, 160).toString('utf8')}… (${request.body.length} bytes)` : request.body.toString('utf8');
  const target = request.target.length > 160 ? `${request.target.slice(0, 160)}… (${request.target.length} chars)` : request.target;
  const headers = request.headers
    .map(([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}…` : value}`)
    .slice(0, 6)
    .join(' | ');
  return `${request.method.slice(0, 20)} ${target} [${request.kind}${request.authenticated ? ', authenticated' : ''}] {${headers}} ${JSON.stringify(body)}`;
}
