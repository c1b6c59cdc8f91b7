/**
 * ServiceAccount tokens: the `serviceaccounts/NAME/token` subresource (TokenRequest) and the
 * registry that tells which service account and pod a bearer token was issued to. The stand-in
 * still accepts any token; a registered one only gives its client an identity that fault rules
 * and `kubectl auth whoami` can name.
 */
import { randomBytes } from 'node:crypto';
import type { ApiCore } from '../api.js';
import { ApiError, badRequest, invalid, invalidValue } from '../errors.js';
import type { ClientIdentity } from '../faults/faults.js';
import { isJsonObject, type JsonObject } from '../types.js';

/** Who a registered token belongs to. */
export interface TokenHolder {
  /** "namespace/name" of the service account. */
  serviceAccount: string;
  /** "namespace/name" of the pod the token is bound to, if any. */
  pod?: string;
}

const defaultExpirationSeconds = 3600;
const minExpirationSeconds = 600;
const maxExpirationSeconds = 2 ** 32;
const defaultAudiences = ['https://kubernetes.default.svc.cluster.local'];

export class TokenRegistry {
  private readonly tokens = new Map<string, TokenHolder & { expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  issue(holder: TokenHolder, expirationSeconds: number): { token: string; expiresAt: number } {
    this.forgetExpired();
    const token = `keelson-sa.${randomBytes(24).toString('base64url')}`;
    const expiresAt = this.now() + expirationSeconds * 1000;
    this.tokens.set(token, { ...holder, expiresAt });
    return { token, expiresAt };
  }

  /** The holder of an unexpired registered token; undefined for any other token. */
  holderOf(token: string | undefined): TokenHolder | undefined {
    if (token === undefined) return undefined;
    const entry = this.tokens.get(token);
    if (!entry || entry.expiresAt <= this.now()) return undefined;
    return entry.pod === undefined ? { serviceAccount: entry.serviceAccount } : { serviceAccount: entry.serviceAccount, pod: entry.pod };
  }

  /** The client's identity with the service account and pod its token names, when it is a registered token. */
  identify(id: ClientIdentity): ClientIdentity {
    const holder = this.holderOf(id.token);
    return holder ? { ...id, ...holder } : id;
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [token, entry] of this.tokens) if (entry.expiresAt <= now) this.tokens.delete(token);
  }
}

interface BoundRef {
  kind: string;
  apiVersion: string;
  name: string;
  uid?: string;
}

function parseSpec(body: unknown, serviceAccount: string): { expirationSeconds: number; audiences: string[]; bound?: BoundRef } {
  if (!isJsonObject(body)) throw badRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest: the body must be a JSON object');
  const spec = body.spec === undefined ? {} : body.spec;
  if (!isJsonObject(spec)) throw badRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest: spec must be an object');
  const expiration = spec.expirationSeconds ?? defaultExpirationSeconds;
  if (typeof expiration !== 'number' || !Number.isInteger(expiration))
    throw badRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest: spec.expirationSeconds must be an integer');
  if (expiration < minExpirationSeconds)
    throw invalid('TokenRequest', 'authentication.k8s.io', serviceAccount, [
      invalidValue('spec.expirationSeconds', expiration, 'may not specify a duration less than 10 minutes'),
    ]);
  if (expiration > maxExpirationSeconds)
    throw invalid('TokenRequest', 'authentication.k8s.io', serviceAccount, [
      invalidValue('spec.expirationSeconds', expiration, 'may not specify a duration larger than 2^32 seconds'),
    ]);
  const audiences = spec.audiences ?? [];
  if (!Array.isArray(audiences) || !audiences.every((a) => typeof a === 'string'))
    throw badRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest: spec.audiences must be a list of strings');
  const ref = spec.boundObjectRef;
  if (ref === undefined || ref === null) return { expirationSeconds: expiration, audiences: audiences as string[] };
  if (!isJsonObject(ref)) throw badRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest: spec.boundObjectRef must be an object');
  for (const field of ['kind', 'apiVersion', 'name', 'uid'] as const) {
    if (ref[field] !== undefined && typeof ref[field] !== 'string')
      throw badRequest(`TokenRequest in version "v1" cannot be handled as a TokenRequest: spec.boundObjectRef.${field} must be a string`);
  }
  return {
    expirationSeconds: expiration,
    audiences: audiences as string[],
    bound: { kind: String(ref.kind ?? ''), apiVersion: String(ref.apiVersion ?? ''), name: String(ref.name ?? ''), uid: ref.uid as string | undefined },
  };
}

/** The bound pod's "namespace/name" after the checks a real server makes. */
function boundPod(core: ApiCore, namespace: string, serviceAccount: string, ref: BoundRef): string {
  if (ref.apiVersion !== 'v1' || ref.kind !== 'Pod')
    throw badRequest(`cannot bind token to object of type ${ref.apiVersion === 'v1' ? '' : ref.apiVersion}, Kind=${ref.kind}`);
  const pods = core.registry.get('', 'v1', 'pods');
  if (!pods) throw badRequest('pods are not served');
  const pod = core.get(pods, namespace, ref.name);
  const spec: JsonObject = isJsonObject(pod.spec) ? pod.spec : {};
  const podAccount = typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? spec.serviceAccountName : 'default';
  if (podAccount !== serviceAccount)
    throw badRequest(`cannot bind token for serviceaccount "${serviceAccount}" to pod running with serviceaccount "${podAccount}"`);
  if (ref.uid && ref.uid !== pod.metadata.uid) {
    throw new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on Pod "${ref.name}": the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      { name: ref.name, kind: 'Pod' },
    );
  }
  return `${namespace}/${ref.name}`;
}

/** POST serviceaccounts/NAME/token: a TokenRequest answered with a registered token (404 when the account does not exist). */
export function requestToken(core: ApiCore, tokens: TokenRegistry, namespace: string, serviceAccount: string, body: unknown): JsonObject {
  const accounts = core.registry.get('', 'v1', 'serviceaccounts');
  if (!accounts) throw badRequest('serviceaccounts are not served');
  core.get(accounts, namespace, serviceAccount);
  const spec = parseSpec(body, serviceAccount);
  const pod = spec.bound ? boundPod(core, namespace, serviceAccount, spec.bound) : undefined;
  const issued = tokens.issue({ serviceAccount: `${namespace}/${serviceAccount}`, ...(pod ? { pod } : {}) }, spec.expirationSeconds);
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: serviceAccount, namespace, creationTimestamp: null },
    spec: {
      audiences: spec.audiences.length > 0 ? spec.audiences : defaultAudiences,
      expirationSeconds: spec.expirationSeconds,
      boundObjectRef: spec.bound ? { ...spec.bound } : null,
    },
    status: { token: issued.token, expirationTimestamp: new Date(Math.floor(issued.expiresAt / 1000) * 1000).toISOString().replace('.000Z', 'Z') },
  };
}
