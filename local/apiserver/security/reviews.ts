/**
 * Access and identity reviews (`kubectl auth can-i`, `kubectl auth whoami`). The stand-in has no
 * authorization, so every review is allowed; the user name shows a token's first characters only.
 */
import { badRequest } from '../errors.js';
import type { ClientIdentity } from '../faults/faults.js';
import type { ResourceType } from '../schema/resources.js';
import { isJsonObject, type JsonObject } from '../types.js';

function review(group: string, plural: string, kind: string): ResourceType {
  return {
    group,
    version: 'v1',
    plural,
    singular: '',
    kind,
    namespaced: plural === 'localsubjectaccessreviews',
    statusSubresource: false,
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    createOnly: true,
  };
}

export const reviewTypes: ResourceType[] = [
  review('authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview'),
  review('authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview'),
  review('authorization.k8s.io', 'localsubjectaccessreviews', 'LocalSubjectAccessReview'),
  review('authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview'),
  review('authentication.k8s.io', 'selfsubjectreviews', 'SelfSubjectReview'),
];

function userInfo(identity: ClientIdentity): JsonObject {
  if (identity.serviceAccount) {
    // As a real server names a ServiceAccount token's user, with the bound pod as an extra.
    const [namespace, name] = identity.serviceAccount.split('/');
    const extra = identity.pod ? { 'authentication.kubernetes.io/pod-name': [identity.pod.split('/')[1]] } : undefined;
    return {
      username: `system:serviceaccount:${namespace}:${name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
      ...(extra ? { extra } : {}),
    };
  }
  const username = identity.commonName ?? (identity.token ? `token:${identity.token.slice(0, 8)}` : 'system:anonymous');
  return { username, groups: identity.commonName || identity.token ? ['system:masters', 'system:authenticated'] : ['system:unauthenticated'] };
}

/** The answer to a POST of a review: the request echoed with an always-allowing status. */
export function answerReview(type: ResourceType, body: unknown, identity: ClientIdentity): JsonObject {
  if (!isJsonObject(body)) throw badRequest(`${type.kind} in version "v1" cannot be handled as a ${type.kind}: the body must be a JSON object`);
  const base: JsonObject = { ...body, apiVersion: `${type.group}/v1`, kind: type.kind, metadata: { creationTimestamp: null } };
  switch (type.plural) {
    case 'selfsubjectreviews':
      return { ...base, status: { userInfo: userInfo(identity) } };
    case 'selfsubjectrulesreviews':
      return {
        ...base,
        status: {
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          incomplete: false,
        },
      };
    default:
      return { ...base, status: { allowed: true, reason: 'the Keelson local API server does not authorize requests' } };
  }
}
