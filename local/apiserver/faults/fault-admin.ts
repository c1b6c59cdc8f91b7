/**
 * The test-only HTTP hook `/_keelson/faults/*` (served only with fault injection enabled, and
 * only to the stand-in's own admin: its kubeconfig token or its admin client certificate, never
 * to a pod's token).
 */
import type { ServerResponse } from 'node:http';
import { ApiError, badRequest, methodNotSupported, pathNotFound } from '../errors.js';
import type { ClientIdentity, Faults, RefusalResponse, RefusalRule } from './faults.js';
import { parseBody, sendJson } from '../http/http-io.js';
import { isJsonObject, type JsonObject } from '../types.js';

/** The credentials the hook accepts. */
export interface FaultAdminCredentials {
  token: string;
  commonName: string;
}

const responses: RefusalResponse[] = [401, 403, 429, 500, 503, 'reset', 'hang'];
const stringFields = ['token', 'commonName', 'userAgent', 'pod', 'serviceAccount'] as const;

function objectBody(raw: Buffer): JsonObject {
  const body = parseBody(raw, 'application/json');
  if (body === undefined) return {};
  if (!isJsonObject(body)) throw badRequest('the body must be a JSON object');
  return body;
}

/** A refusal rule from a request body: known fields only, each of its type, at least one matcher. */
export function parseRefusalRule(body: JsonObject): RefusalRule {
  const rule: RefusalRule = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'response') {
      if (!responses.includes(value as RefusalResponse)) throw badRequest(`response: must be one of ${responses.map((r) => JSON.stringify(r)).join(', ')}`);
      rule.response = value as RefusalResponse;
      continue;
    }
    if (!(stringFields as readonly string[]).includes(key)) throw badRequest(`${key}: unknown field (expected ${[...stringFields, 'response'].join(', ')})`);
    if (typeof value !== 'string' || value === '') throw badRequest(`${key}: must be a non-empty string`);
    if ((key === 'pod' || key === 'serviceAccount') && !/^[^/]+\/[^/]+$/.test(value)) throw badRequest(`${key}: must be "namespace/name"`);
    rule[key as (typeof stringFields)[number]] = value;
  }
  if (!stringFields.some((key) => rule[key] !== undefined)) throw badRequest(`a refusal needs at least one of ${stringFields.join(', ')}`);
  return rule;
}

function isAdmin(identity: ClientIdentity, admin: FaultAdminCredentials): boolean {
  return identity.token === admin.token || identity.commonName === admin.commonName;
}

export function faultAdmin(
  faults: Faults,
  admin: FaultAdminCredentials,
  identity: ClientIdentity,
  method: string,
  action: string | undefined,
  raw: Buffer,
  res: ServerResponse,
): void {
  if (!isAdmin(identity, admin))
    throw new ApiError(403, 'Forbidden', 'the fault injection hook answers only the API server admin (its kubeconfig token or admin client certificate)');
  const control = faults.control();
  if (action === 'refusals') {
    if (method !== 'GET') throw methodNotSupported('faults', '', method);
    return sendJson(res, 200, { refusals: control.refusals() });
  }
  if (method !== 'POST') throw methodNotSupported('faults', '', method);
  const args = objectBody(raw);
  switch (action) {
    case 'pause':
      if (args.mode !== undefined && args.mode !== 'hang' && args.mode !== 'unavailable') throw badRequest('mode: must be "hang" or "unavailable"');
      control.pause(args.mode === 'unavailable' ? 'unavailable' : 'hang');
      return sendJson(res, 200, { paused: true });
    case 'resume':
      control.resume();
      return sendJson(res, 200, { paused: false });
    case 'drop-watches':
      if (args.identity !== undefined && typeof args.identity !== 'string') throw badRequest('identity: must be a string');
      return sendJson(res, 200, {
        dropped: control.dropWatches({ identity: args.identity as string | undefined, mode: args.mode === 'reset' ? 'reset' : 'close' }),
      });
    case 'refuse': {
      const rule = parseRefusalRule(args);
      return sendJson(res, 200, { id: control.refuse(rule).id, rule });
    }
    case 'lift':
      if (typeof args.id !== 'string' || args.id === '') throw badRequest('id: must be the id a refuse answered');
      if (!control.lift(args.id)) throw new ApiError(404, 'NotFound', `no refusal with id "${args.id}"`);
      return sendJson(res, 200, { lifted: args.id });
    case 'compact':
      control.compactHistory();
      return sendJson(res, 200, { compacted: true });
    default:
      throw pathNotFound();
  }
}
