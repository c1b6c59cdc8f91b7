import type { V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/**
 * Least privilege for ha-node in its own namespace, from the calls it makes: the DCS Leases
 * (dcs/lease-dcs.ts: list, watch, get, create, update; never patch or delete) and its cluster's
 * pods (takeover/leader-pods.ts lists and watches them; the role label is a patch). The leader
 * watches Database objects and reads the password Secrets spec.roles names (managed/kube-reads.ts):
 * `get` on those names only, so no other Secret of the namespace is readable. No Services, Events
 * or anything cluster-wide.
 */
export function haNodeRules(passwordSecrets: readonly string[] = []): V1PolicyRule[] {
  const names = [...new Set(passwordSecrets)].sort();
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch', 'patch'] },
    { apiGroups: ['keelson.io'], resources: ['databases'], verbs: ['list', 'watch'] },
    // An empty resourceNames would mean every Secret: the rule exists only when some are named.
    ...(names.length > 0 ? [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: names }] : []),
  ];
}

/** The Secrets spec.roles names (ha-node reads each one's password). */
export function passwordSecretNames(roles: readonly { passwordSecret?: { name: string } }[]): string[] {
  return roles.flatMap((role) => (role.passwordSecret ? [role.passwordSecret.name] : []));
}

export function buildRole(ctx: BuildContext): V1Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: ownedMeta(ctx, clusterNames(ctx).role, 'role'),
    rules: haNodeRules(passwordSecretNames(ctx.cluster.spec.roles)),
  };
}
