import type { V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/**
 * Least privilege for ha-node in its own namespace, from the calls it makes: the DCS Leases
 * (dcs/lease-dcs.ts: list, watch, get, create, update; never patch or delete) and its cluster's
 * pods (takeover/leader-pods.ts lists and watches them; the role label is a patch). No Secrets,
 * Services, Events or anything cluster-wide.
 */
export function haNodeRules(): V1PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch', 'patch'] },
  ];
}

export function buildRole(ctx: BuildContext): V1Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: ownedMeta(ctx, clusterNames(ctx).role, 'role'),
    rules: haNodeRules(),
  };
}
