/** Resource paths: collections (list, watch, create, deletecollection), items and subresources. */
import type { ServerResponse } from 'node:http';
import { patchContentTypes } from '../api.js';
import { ApiError, methodNotSupported, pathNotFound } from '../errors.js';
import { identityLabel, type ClientIdentity } from '../faults/faults.js';
import type { HandlerContext, Parsed } from './handler-context.js';
import { parseBody, sendJson } from './http-io.js';
import { decodeContinue } from '../storage/paging.js';
import { bindPod } from '../writes/pod-binding.js';
import { answerReview } from '../security/reviews.js';
import { deleteOptions, getParams, listParams, writeOptions } from './request-options.js';
import type { ResourceType } from '../schema/resources.js';
import { requestToken } from '../security/service-account-tokens.js';
import { getScale, updateScale } from '../writes/scale.js';
import { toTable, wantsTable } from './table.js';
import type { KubeObject } from '../types.js';
import { serveWatch } from './watch.js';

/** RFC 7234 warn-code 299 headers, as a real server sends them (kubectl prints "Warning: ..."). */
function setWarnings(res: ServerResponse, warnings: string[] | undefined): void {
  if (!warnings || warnings.length === 0) return;
  res.setHeader(
    'Warning',
    [...new Set(warnings)].map((w) => `299 - ${JSON.stringify(w)}`),
  );
}

function successStatus(type: ResourceType, o: KubeObject): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: o.metadata.name, group: type.group, kind: type.plural, uid: o.metadata.uid },
  };
}

/** Kinds whose DELETE answers with the object rather than a Status, as on a real server. */
function returnsDeletedObject(type: ResourceType): boolean {
  return (
    Boolean(type.crdName) ||
    (type.group === '' && ['pods', 'services', 'namespaces', 'serviceaccounts'].includes(type.plural)) ||
    type.plural === 'customresourcedefinitions'
  );
}

export async function serveResource(
  ctx: HandlerContext,
  parsed: Parsed,
  raw: Buffer,
  res: ServerResponse,
  group: string,
  version: string,
  rest: string[],
  identity: ClientIdentity,
): Promise<void> {
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

  if (type.createOnly) {
    if (name || method !== 'POST') throw methodNotSupported(type.plural, type.group, method);
    // kubectl sends reviews as protobuf; the answer does not depend on the request, so the body
    // is not decoded (the response is JSON, which kubectl accepts).
    const body = parsed.contentType.includes('protobuf') ? {} : parseBody(raw, parsed.contentType);
    return sendJson(res, 201, answerReview(type, body, identity));
  }

  if (!name) {
    if (method === 'GET') {
      const params = listParams(query);
      if (params.watch) {
        serveWatch(
          core,
          res,
          {
            type,
            namespace,
            resourceVersion: params.resourceVersion,
            labelSelector: params.labelSelector,
            fieldSelector: params.fieldSelector,
            allowBookmarks: params.allowBookmarks,
            // 0 or less means the server's default; the cap keeps the timer in Node's 32-bit range.
            timeoutSeconds: params.timeoutSeconds !== undefined && params.timeoutSeconds > 0 ? Math.min(params.timeoutSeconds, 2_000_000) : undefined,
            table: wantsTable(parsed.accept),
            identity: identityLabel(identity),
          },
          {
            bookmarkIntervalMs: ctx.bookmarkIntervalMs,
            defaultTimeoutSeconds: ctx.defaultWatchTimeoutSeconds,
            deliver: (write) => ctx.faults.whenRunning(write),
            track: (_label, stop) => ctx.faults.trackWatch(identity, stop),
          },
        );
        return;
      }
      const result = core.list(type, namespace, {
        labelSelector: params.labelSelector,
        fieldSelector: params.fieldSelector,
        limit: params.limit,
        continue: params.continue,
      });
      const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
      if (result.continue) listMeta.continue = result.continue;
      if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
      if (wantsTable(parsed.accept)) return sendJson(res, 200, toTable(type, result.items, listMeta));
      return sendJson(res, 200, { kind: `${type.kind}List`, apiVersion: group ? `${group}/${version}` : version, metadata: listMeta, items: result.items });
    }
    if (method === 'POST') {
      const options = writeOptions(query, parsed.userAgent, 'create');
      const created = core.create(type, namespace, parseBody(raw, parsed.contentType), options);
      setWarnings(res, options.warnings);
      return sendJson(res, 201, created);
    }
    if (method === 'DELETE') {
      // Namespaces have no deletecollection verb on a real server (a stray DELETE would end them all).
      if (type.group === '' && type.plural === 'namespaces') throw methodNotSupported(type.plural, type.group, method);
      // Every option is decoded and validated (and the selectors parsed) before the first delete.
      const params = listParams(query);
      if (params.continue) decodeContinue(params.continue);
      const options = deleteOptions(query, parseBody(raw, parsed.contentType));
      const matching = core.list(type, namespace, { labelSelector: params.labelSelector, fieldSelector: params.fieldSelector });
      const deleted = matching.items.map((o) => core.delete(type, o.metadata.namespace, o.metadata.name as string, { ...options }).object);
      return sendJson(res, 200, {
        kind: `${type.kind}List`,
        apiVersion: group ? `${group}/${version}` : version,
        metadata: { resourceVersion: String(core.store.currentRevision) },
        items: deleted,
      });
    }
    throw methodNotSupported(type.plural, type.group, method);
  }

  if (subresource === 'scale' && type.scale) {
    if (method === 'GET') return sendJson(res, 200, getScale(core, type, namespace, name));
    if (method === 'PUT' || method === 'PATCH') {
      const patchType = method === 'PATCH' ? patchContentTypes[parsed.contentType] : undefined;
      if (method === 'PATCH' && !patchType) throw new ApiError(415, 'UnsupportedMediaType', `unsupported patch type ${parsed.contentType}`);
      return sendJson(
        res,
        200,
        updateScale(
          core,
          type,
          namespace,
          name,
          parseBody(raw, parsed.contentType),
          patchType,
          writeOptions(query, parsed.userAgent, patchType === 'apply' ? 'apply' : method === 'PATCH' ? 'patch' : 'update'),
        ),
      );
    }
    throw methodNotSupported(type.plural, type.group, method);
  }
  if (subresource === 'token' && type.group === '' && type.plural === 'serviceaccounts') {
    if (method !== 'POST') throw methodNotSupported(type.plural, type.group, method);
    return sendJson(res, 201, requestToken(core, ctx.tokens, namespace ?? 'default', name, parseBody(raw, parsed.contentType)));
  }
  if (subresource === 'binding' && type.group === '' && type.plural === 'pods') {
    if (method !== 'POST') throw methodNotSupported(type.plural, type.group, method);
    return sendJson(res, 201, bindPod(core, type, namespace, name, parseBody(raw, parsed.contentType)));
  }
  const validSub =
    subresource === undefined ||
    (subresource === 'status' && type.statusSubresource) ||
    (subresource === 'finalize' && type.plural === 'namespaces' && type.group === '');
  if (!validSub) throw pathNotFound();

  switch (method) {
    case 'GET': {
      getParams(query);
      const o = core.get(type, namespace, name);
      if (wantsTable(parsed.accept)) return sendJson(res, 200, toTable(type, [o], { resourceVersion: o.metadata.resourceVersion }));
      return sendJson(res, 200, o);
    }
    case 'PUT': {
      const options = writeOptions(query, parsed.userAgent, 'update');
      const { object, created } = core.update(type, namespace, name, parseBody(raw, parsed.contentType), subresource, options);
      setWarnings(res, options.warnings);
      return sendJson(res, created ? 201 : 200, object);
    }
    case 'PATCH': {
      const patchType = patchContentTypes[parsed.contentType];
      if (!patchType)
        throw new ApiError(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
        );
      const options = writeOptions(query, parsed.userAgent, patchType === 'apply' ? 'apply' : 'patch');
      const body = patchType === 'apply' ? parseBody(raw, 'application/yaml') : parseBody(raw, 'application/json');
      const { object, created } = core.patch(type, namespace, name, patchType, body, subresource, options);
      setWarnings(res, options.warnings);
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
