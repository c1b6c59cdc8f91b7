import type { V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/**
 * Least privilege for ha-node in its own namespace: the DCS Leases, its own pods (role label,
 * peer discovery), Endpoints read, and Events. Nothing cluster-wide.
 */
export function haNodeRules(): V1PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
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
