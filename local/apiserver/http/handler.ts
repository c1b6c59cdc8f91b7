/** HTTP front: health, version, discovery, OpenAPI and dispatch to resource routes; errors as Status bodies. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedVersion,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  serverVersion,
} from './discovery.js';
import { ApiError, badRequest, pathNotFound } from '../errors.js';
import { faultAdmin } from '../faults/fault-admin.js';
import type { ClientIdentity } from '../faults/faults.js';
import type { HandlerContext, Parsed } from './handler-context.js';
import { identityOf, readBody, sendJson, sendText } from './http-io.js';
import { serveResource } from './resource-routes.js';

export type { HandlerContext } from './handler-context.js';

export function createHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const identity = ctx.tokens.identify(identityOf(req));
    if (ctx.logger.isLevelEnabled('debug')) {
      // One line per request at debug level (no tokens: only the URL, status and time).
      const started = process.hrtime.bigint();
      res.on('close', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        ctx.logger.debug(
          { method: req.method, url: req.url, status: res.statusCode, ms: Math.round(ms * 100) / 100, userAgent: req.headers['user-agent'] },
          'request',
        );
      });
    }
    const isFaultAdmin = ctx.faultAdmin && (req.url ?? '').startsWith('/_keelson/faults');
    // The hook itself is never refused: a refusal must stay liftable.
    const refusal = isFaultAdmin ? undefined : ctx.faults.refusalFor(identity);
    if (refusal !== undefined) {
      if (refusal === 'reset') {
        req.socket.destroy();
        return;
      }
      if (refusal === 'hang') return;
      const status = new ApiError(
        refusal,
        refusal === 401
          ? 'Unauthorized'
          : refusal === 403
            ? 'Forbidden'
            : refusal === 429
              ? 'TooManyRequests'
              : refusal === 503
                ? 'ServiceUnavailable'
                : 'InternalError',
        'refused by fault injection',
      );
      sendJson(res, refusal, status.toStatus());
      return;
    }
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
    segments = url.pathname
      .split('/')
      .filter((s) => s.length > 0)
      .map(decodeURIComponent);
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

  if (first === '_keelson' && segments[1] === 'faults' && ctx.faultAdmin)
    return faultAdmin(ctx.faults, ctx.admin, identity, parsed.method, segments[2], raw, res);
  if (parsed.method === 'GET' && segments.length === 1 && ['healthz', 'readyz', 'livez'].includes(first)) return sendText(res, 200, 'ok');
  if (parsed.method === 'GET' && segments.length >= 2 && ['healthz', 'readyz', 'livez'].includes(first)) return sendText(res, 200, 'ok');
  if (parsed.method === 'GET' && first === 'version' && segments.length === 1) return sendJson(res, 200, serverVersion);
  if (first === 'openapi') return serveOpenApi(ctx, parsed, res);
  if (first === 'api') {
    if (segments.length === 1) {
      const aggregated = aggregatedVersion(parsed.accept);
      if (aggregated) return sendJson(res, 200, aggregatedDiscovery(ctx.core.registry, true, aggregated), aggregatedContentType(aggregated));
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
      const aggregated = aggregatedVersion(parsed.accept);
      if (aggregated) return sendJson(res, 200, aggregatedDiscovery(ctx.core.registry, false, aggregated), aggregatedContentType(aggregated));
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
  res.writeHead(200, {
    'Content-Type': 'application/json',
    ETag: `"${doc.hash}"`,
    'Content-Length': Buffer.byteLength(doc.body),
    'Cache-Control': 'no-cache, private',
  });
  res.end(doc.body);
}
