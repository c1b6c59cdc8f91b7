/** HTTP front: routing of Kubernetes API paths, content negotiation, errors as Status bodies. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../../lib/log.js';
import { patchContentTypes, type ApiCore, type DeleteOptions, type WriteOptions } from './api.js';
import { aggregatedContentType, aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, serverVersion, wantsAggregated } from './discovery.js';
import { ApiError, badRequest, methodNotSupported, pathNotFound } from './errors.js';
import { identityLabel, type ClientIdentity, type Faults } from './faults.js';
import type { OpenApiDocuments } from './openapi.js';
import type { ResourceType } from './resources.js';
import { getScale, updateScale } from './scale.js';
import { toTable, wantsTable } from './table.js';
import { isJsonObject, type KubeObject } from './types.js';
import { serveWatch } from './watch.js';

const maxBodyBytes = 3 * 1024 * 1024;

export interface HandlerContext {
  core: ApiCore;
  openapi: OpenApiDocuments;
  faults: Faults;
  logger: Logger;
  bookmarkIntervalMs: number;
  defaultWatchTimeoutSeconds: number;
  /** Serves /_keelson/faults (test-only admin hook). */
  faultAdmin: boolean;
}

interface Parsed {
  method: string;
  segments: string[];
  query: URLSearchParams;
  accept: string | undefined;
  contentType: string;
  userAgent: string | undefined;
}

function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  if (contentType.includes('protobuf') || contentType.includes('cbor')) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`);
  if (contentType.includes('yaml')) {
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`error decoding from json: ${(err as Error).message}`);
  }
}

export function identityOf(req: IncomingMessage): ClientIdentity {
  const auth = req.headers.authorization;
  const token = auth && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : undefined;
  let commonName: string | undefined;
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate === 'function') {
    const cert = socket.getPeerCertificate();
    if (cert && cert.subject && typeof cert.subject.CN === 'string') commonName = cert.subject.CN;
  }
  return { token, commonName, userAgent: req.headers['user-agent'] };
}

function queryFlag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v === 'true' || v === '1';
}

/** Like a real server, an unnamed field manager is the User-Agent up to its first '/'. */
function defaultManager(userAgent: string | undefined): string | undefined {
  if (!userAgent) return undefined;
  return userAgent.split('/')[0].slice(0, 128) || undefined;
}

function writeOptions(query: URLSearchParams, userAgent?: string): WriteOptions {
  const dryRun = query.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All')) throw badRequest(`dryRun: Unsupported value: "${dryRun.find((d) => d !== 'All')}": supported values: "All"`);
  const fieldValidation = query.get('fieldValidation') ?? undefined;
  if (fieldValidation && !['Strict', 'Warn', 'Ignore'].includes(fieldValidation)) {
    throw badRequest(`fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`);
  }
  const explicitManager = query.get('fieldManager') ?? undefined;
  if (explicitManager !== undefined && (explicitManager.length === 0 || explicitManager.length > 128)) {
    throw badRequest('fieldManager: Invalid value: must be between 1 and 128 characters long');
  }
  return { dryRun: dryRun.length > 0, fieldManager: explicitManager ?? defaultManager(userAgent), explicitManager: explicitManager !== undefined, fieldValidation, force: queryFlag(query, 'force') };
}

function deleteOptions(query: URLSearchParams, body: unknown): DeleteOptions {
  const options: DeleteOptions = isJsonObject(body) ? (body as DeleteOptions) : {};
  const policy = query.get('propagationPolicy');
  if (policy) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const grace = nonNegativeInteger(query, 'gracePeriodSeconds');
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  if (query.get('orphanDependents') !== null) options.orphanDependents = queryFlag(query, 'orphanDependents');
  if (query.getAll('dryRun').includes('All')) options.dryRun = true;
  if (options.propagationPolicy && !['Background', 'Foreground', 'Orphan'].includes(options.propagationPolicy)) {
    throw badRequest(`propagationPolicy: Unsupported value: "${options.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  return options;
}

function nonNegativeInteger(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`${name}: Invalid value: "${raw}": must be a non-negative integer`);
  return Number(raw);
}

function successStatus(type: ResourceType, o: KubeObject): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: o.metadata.name, group: type.group, kind: type.plural, uid: o.metadata.uid } };
}

/** Kinds whose DELETE answers with the object rather than a Status, as on a real server. */
function returnsDeletedObject(type: ResourceType): boolean {
  return Boolean(type.crdName) || (type.group === '' && ['pods', 'services', 'namespaces'].includes(type.plural)) || type.plural === 'customresourcedefinitions';
}

export function createHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const identity = identityOf(req);
    const refusal = ctx.faults.refusalFor(identity);
    if (refusal !== undefined) {
      if (refusal === 'reset') {
        req.socket.destroy();
        return;
      }
      if (refusal === 'hang') return;
      const status = new ApiError(refusal, refusal === 401 ? 'Unauthorized' : refusal === 403 ? 'Forbidden' : refusal === 429 ? 'TooManyRequests' : refusal === 503 ? 'ServiceUnavailable' : 'InternalError', 'refused by fault injection');
      sendJson(res, refusal, status.toStatus());
      return;
    }
    const isFaultAdmin = ctx.faultAdmin && (req.url ?? '').startsWith('/_keelson/faults');
    if (ctx.faults.mode === 'unavailable' && !isFaultAdmin) {
      sendJson(res, 503, new ApiError(503, 'ServiceUnavailable', 'the server is paused by fault injection').toStatus());
      return;
    }
    const run = (): void => {
      handle(ctx, req, res, identity).catch((err: unknown) => {
        if (err instanceof ApiError) {
          sendJson(res, err.code, err.toStatus());
          return;
        }
        ctx.logger.error({ err, method: req.method, url: req.url }, 'request failed');
        sendJson(res, 500, new ApiError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`).toStatus());
      });
    };
    if (isFaultAdmin) run();
    else ctx.faults.whenRunning(run);
  };
}

async function handle(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, identity: ClientIdentity): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  let segments: string[];
  try {
    segments = url.pathname.split('/').filter((s) => s.length > 0).map(decodeURIComponent);
  } catch {
    throw badRequest(`malformed request path: ${url.pathname}`);
  }
  const parsed: Parsed = {
    method: (req.method ?? 'GET').toUpperCase(),
    segments,
    query: url.searchParams,
    accept: req.headers.accept,
    contentType: (req.headers['content-type'] ?? 'application/json').split(';')[0].trim().toLowerCase(),
    userAgent: req.headers['user-agent'],
  };
  const raw = await readBody(req);
  const [first] = segments;

  if (first === '_keelson' && segments[1] === 'faults' && ctx.faultAdmin) return faultAdmin(ctx, parsed, raw, res);
  if (parsed.method === 'GET' && segments.length === 1 && ['healthz', 'readyz', 'livez'].includes(first)) return sendText(res, 200, 'ok');
  if (parsed.method === 'GET' && segments.length >= 2 && ['healthz', 'readyz', 'livez'].includes(first)) return sendText(res, 200, 'ok');
  if (parsed.method === 'GET' && first === 'version' && segments.length === 1) return sendJson(res, 200, serverVersion);
  if (first === 'openapi') return serveOpenApi(ctx, parsed, res);
  if (first === 'api') {
    if (segments.length === 1) {
      if (wantsAggregated(parsed.accept)) return sendJson(res, 200, aggregatedDiscovery(ctx.core.registry, true), aggregatedContentType);
      return sendJson(res, 200, apiVersions(req.headers.host ?? '127.0.0.1'));
    }
    if (segments.length === 2) {
      const list = apiResourceList(ctx.core.registry, '', segments[1]);
      return list ? sendJson(res, 200, list) : sendJson(res, 404, pathNotFound().toStatus());
    }
    return serveResource(ctx, parsed, raw, res, '', segments[1], segments.slice(2), identity);
  }
  if (first === 'apis') {
    if (segments.length === 1) {
      if (wantsAggregated(parsed.accept)) return sendJson(res, 200, aggregatedDiscovery(ctx.core.registry, false), aggregatedContentType);
      return sendJson(res, 200, apiGroupList(ctx.core.registry));
    }
    if (segments.length === 2) {
      const group = apiGroup(ctx.core.registry, segments[1]);
      return group ? sendJson(res, 200, group) : sendJson(res, 404, pathNotFound().toStatus());
    }
    if (segments.length === 3) {
      const list = apiResourceList(ctx.core.registry, segments[1], segments[2]);
      return list ? sendJson(res, 200, list) : sendJson(res, 404, pathNotFound().toStatus());
    }
    return serveResource(ctx, parsed, raw, res, segments[1], segments[2], segments.slice(3), identity);
  }
  sendJson(res, 404, pathNotFound().toStatus());
}

function serveOpenApi(ctx: HandlerContext, parsed: Parsed, res: ServerResponse): void {
  const [, version, ...rest] = parsed.segments;
  if (version !== 'v3') return sendJson(res, 404, pathNotFound().toStatus());
  if (rest.length === 0) return sendJson(res, 200, ctx.openapi.root());
  const doc = ctx.openapi.document(rest.join('/'));
  if (!doc) return sendJson(res, 404, pathNotFound().toStatus());
  res.writeHead(200, { 'Content-Type': 'application/json', ETag: `"${doc.hash}"`, 'Content-Length': Buffer.byteLength(doc.body), 'Cache-Control': 'no-cache, private' });
  res.end(doc.body);
}

async function serveResource(ctx: HandlerContext, parsed: Parsed, raw: Buffer, res: ServerResponse, group: string, version: string, rest: string[], identity: ClientIdentity): Promise<void> {
  const { core } = ctx;
  let namespace: string | undefined;
  let tail = rest;
  const namespaceObjectPath = rest[0] === 'namespaces' && (rest.length <= 2 || (rest.length === 3 && ['status', 'finalize'].includes(rest[2])));
  if (rest[0] === 'namespaces' && !namespaceObjectPath) {
    namespace = rest[1];
    tail = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = tail;
  const type = core.registry.get(group, version, plural ?? '');
  if (!type || extra.length > 0) throw pathNotFound();
  if (!type.namespaced && namespace !== undefined) throw pathNotFound();
  const { method, query } = parsed;

  if (!name) {
    if (method === 'GET') {
      if (queryFlag(query, 'watch')) {
        serveWatch(core, res, {
          type,
          namespace,
          resourceVersion: query.get('resourceVersion') ?? undefined,
          labelSelector: query.get('labelSelector') ?? undefined,
          fieldSelector: query.get('fieldSelector') ?? undefined,
          allowBookmarks: queryFlag(query, 'allowWatchBookmarks'),
          timeoutSeconds: nonNegativeInteger(query, 'timeoutSeconds'),
          table: wantsTable(parsed.accept),
          identity: identityLabel(identity),
        }, {
          bookmarkIntervalMs: ctx.bookmarkIntervalMs,
          defaultTimeoutSeconds: ctx.defaultWatchTimeoutSeconds,
          deliver: (write) => ctx.faults.whenRunning(write),
          track: (id, stop) => ctx.faults.trackWatch(id, stop),
        });
        return;
      }
      const result = core.list(type, namespace, {
        labelSelector: query.get('labelSelector') ?? undefined,
        fieldSelector: query.get('fieldSelector') ?? undefined,
        limit: nonNegativeInteger(query, 'limit'),
        continue: query.get('continue') ?? undefined,
      });
      const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
      if (result.continue) listMeta.continue = result.continue;
      if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
      if (wantsTable(parsed.accept)) return sendJson(res, 200, toTable(type, result.items, listMeta));
      return sendJson(res, 200, { kind: `${type.kind}List`, apiVersion: group ? `${group}/${version}` : version, metadata: listMeta, items: result.items });
    }
    if (method === 'POST') {
      const created = core.create(type, namespace, parseBody(raw, parsed.contentType), writeOptions(query, parsed.userAgent));
      return sendJson(res, 201, created);
    }
    if (method === 'DELETE') {
      const options = deleteOptions(query, parseBody(raw, parsed.contentType));
      const matching = core.list(type, namespace, { labelSelector: query.get('labelSelector') ?? undefined, fieldSelector: query.get('fieldSelector') ?? undefined });
      const deleted = matching.items.map((o) => core.delete(type, o.metadata.namespace, o.metadata.name as string, { ...options }).object);
      return sendJson(res, 200, { kind: `${type.kind}List`, apiVersion: group ? `${group}/${version}` : version, metadata: { resourceVersion: String(core.store.currentRevision) }, items: deleted });
    }
    throw methodNotSupported(type.plural, type.group, method);
  }

  if (subresource === 'scale' && type.scale) {
    if (method === 'GET') return sendJson(res, 200, getScale(core, type, namespace, name));
    if (method === 'PUT' || method === 'PATCH') {
      const patchType = method === 'PATCH' ? patchContentTypes[parsed.contentType] : undefined;
      if (method === 'PATCH' && !patchType) throw new ApiError(415, 'UnsupportedMediaType', `unsupported patch type ${parsed.contentType}`);
      return sendJson(res, 200, updateScale(core, type, namespace, name, parseBody(raw, parsed.contentType), patchType, writeOptions(query, parsed.userAgent)));
    }
    throw methodNotSupported(type.plural, type.group, method);
  }
  if (subresource === 'binding' && type.group === '' && type.plural === 'pods') {
    if (method !== 'POST') throw methodNotSupported(type.plural, type.group, method);
    return sendJson(res, 201, bindPod(core, type, namespace, name, parseBody(raw, parsed.contentType)));
  }
  const validSub = subresource === undefined || (subresource === 'status' && type.statusSubresource) || (subresource === 'finalize' && type.plural === 'namespaces' && type.group === '');
  if (!validSub) throw pathNotFound();

  switch (method) {
    case 'GET': {
      const o = core.get(type, namespace, name);
      if (wantsTable(parsed.accept)) return sendJson(res, 200, toTable(type, [o], { resourceVersion: o.metadata.resourceVersion }));
      return sendJson(res, 200, o);
    }
    case 'PUT': {
      const { object, created } = core.update(type, namespace, name, parseBody(raw, parsed.contentType), subresource, writeOptions(query, parsed.userAgent));
      return sendJson(res, created ? 201 : 200, object);
    }
    case 'PATCH': {
      const patchType = patchContentTypes[parsed.contentType];
      if (!patchType) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`);
      const body = patchType === 'apply' ? parseBody(raw, 'application/yaml') : parseBody(raw, 'application/json');
      const { object, created } = core.patch(type, namespace, name, patchType, body, subresource, writeOptions(query, parsed.userAgent));
      return sendJson(res, created ? 201 : 200, object);
    }
    case 'DELETE': {
      if (subresource) throw methodNotSupported(type.plural, type.group, method);
      const { object, removed } = core.delete(type, namespace, name, deleteOptions(query, parseBody(raw, parsed.contentType)));
      if (!removed || returnsDeletedObject(type)) return sendJson(res, removed ? 200 : 200, object);
      return sendJson(res, 200, successStatus(type, object));
    }
    default:
      throw methodNotSupported(type.plural, type.group, method);
  }
}

/** pods/NAME/binding: the scheduler's way to set spec.nodeName once. */
function bindPod(core: ApiCore, type: ResourceType, namespace: string | undefined, name: string, body: unknown): Record<string, unknown> {
  const target = isJsonObject(body) && isJsonObject(body.target) ? body.target : undefined;
  if (!target || typeof target.name !== 'string' || target.name === '') throw badRequest('Binding.target.name is required');
  const pod = core.get(type, namespace, name);
  const spec = isJsonObject(pod.spec) ? pod.spec : {};
  if (spec.nodeName) throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${String(spec.nodeName)}"`, { name, kind: 'pods/binding' });
  if (pod.metadata.deletionTimestamp) throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is being deleted, cannot be assigned to a host`);
  pod.spec = { ...spec, nodeName: target.name };
  core.bindUpdate(type, pod);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}

async function faultAdmin(ctx: HandlerContext, parsed: Parsed, raw: Buffer, res: ServerResponse): Promise<void> {
  const control = ctx.faults.control();
  const action = parsed.segments[2];
  const body = parseBody(raw, 'application/json');
  const args = isJsonObject(body) ? body : {};
  if (parsed.method !== 'POST') throw methodNotSupported('faults', '', parsed.method);
  switch (action) {
    case 'pause':
      control.pause(args.mode === 'unavailable' ? 'unavailable' : 'hang');
      return sendJson(res, 200, { paused: true });
    case 'resume':
      control.resume();
      return sendJson(res, 200, { paused: false });
    case 'drop-watches':
      return sendJson(res, 200, { dropped: control.dropWatches({ identity: typeof args.identity === 'string' ? args.identity : undefined, mode: args.mode === 'reset' ? 'reset' : 'close' }) });
    case 'refuse':
      control.refuse(args as never);
      return sendJson(res, 200, { refused: args });
    case 'compact':
      control.compactHistory();
      return sendJson(res, 200, { compacted: true });
    default:
      throw pathNotFound();
  }
}
