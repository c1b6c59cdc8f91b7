import type { V1PolicyRule } from '@kubernetes/client-node';
import { haNodeRules } from './builders/role.js';

/**
 * What the operator's own service account must be allowed in every namespace it manages (the
 * chart's ClusterRole states it in YAML; a test checks the chart grants this and nothing more). It
 * includes everything it grants to the database pods, because RBAC forbids granting more than
 * one holds. Owned kinds are listed and watched (by the keelson.io/cluster label) because the
 * reconciler reads them from watch caches.
 */
export function operatorRules(): V1PolicyRule[] {
  return [
    { apiGroups: ['keelson.io'], resources: ['databaseclusters'], verbs: ['get', 'list', 'watch', 'update'] },
    { apiGroups: ['keelson.io'], resources: ['databaseclusters/status', 'databaseclusters/finalizers'], verbs: ['update'] },
    // Schedules create Backup objects; the operator runs pending ones and records their outcome.
    { apiGroups: ['keelson.io'], resources: ['backups'], verbs: ['get', 'list', 'watch', 'create'] },
    { apiGroups: ['keelson.io'], resources: ['backups/status'], verbs: ['update'] },
    // Database objects: status from the leader's report, and the finalizer that runs a delete policy.
    { apiGroups: ['keelson.io'], resources: ['databases'], verbs: ['get', 'list', 'watch', 'update'] },
    { apiGroups: ['keelson.io'], resources: ['databases/status'], verbs: ['update'] },
    { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
    // delete on the pooler's kinds but Secrets: a disabled pooler's objects are removed (reconcile/pooler-cleanup.ts).
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
    { apiGroups: [''], resources: ['services', 'configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    // update: the backup TLS CA is rotated before it expires (reconcile/backup-ca-rotation.ts); credential Secrets never are.
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
    { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    // Until a cluster is Ready: whether <name>-rw routes to the primary yet (reconcile/serving.ts).
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'delete'] },
    { apiGroups: ['monitoring.coreos.com'], resources: ['servicemonitors'], verbs: ['get', 'create', 'update'] },
    ...haNodeRules(),
  ];
}

/** True when `granted` allows every verb on every resource `needed` asks for. */
export function rulesCover(granted: V1PolicyRule[], needed: V1PolicyRule[]): string[] {
  const missing: string[] = [];
  for (const rule of needed) {
    for (const group of rule.apiGroups ?? ['']) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs) {
          const ok = granted.some(
            (g) =>
              (g.apiGroups ?? ['']).includes(group) &&
              (g.resources ?? []).includes(resource) &&
              (g.verbs.includes(verb) || g.verbs.includes('*')) &&
              !g.resourceNames?.length,
          );
          if (!ok) missing.push(`${verb} ${group || 'core'}/${resource}`);
        }
      }
    }
  }
  return missing;
}
