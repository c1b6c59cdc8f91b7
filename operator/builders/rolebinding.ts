import type { V1RoleBinding } from '@kubernetes/client-node';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

export function buildRoleBinding(ctx: BuildContext): V1RoleBinding {
  const n = clusterNames(ctx);
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: ownedMeta(ctx, n.roleBinding, 'rolebinding'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: n.role },
    subjects: [{ kind: 'ServiceAccount', name: n.serviceAccount, namespace: ctx.cluster.metadata.namespace }],
  };
}
