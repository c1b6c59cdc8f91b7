import type { KubernetesObject } from '@kubernetes/client-node';
import { buildConfigMap } from './configmap.js';
import type { BuildContext } from './context.js';
import { buildPodDisruptionBudget } from './pdb.js';
import { buildRole } from './role.js';
import { buildRoleBinding } from './rolebinding.js';
import { buildServiceAccount } from './serviceaccount.js';
import { buildService, serviceKinds } from './services.js';
import { buildServiceMonitor } from './servicemonitor.js';
import { buildStatefulSet } from './statefulset.js';

export type { BuildContext } from './context.js';

export interface DesiredOptions {
  /** Whether the monitoring.coreos.com ServiceMonitor CRD is installed. */
  serviceMonitorAvailable: boolean;
}

/**
 * Every object a cluster needs except its Secrets (those depend on what already exists, so the
 * reconciler builds them itself), in the order they should be created: identity and RBAC,
 * configuration, Services, the StatefulSet, then the objects that refer to running pods.
 */
export function desiredObjects(ctx: BuildContext, options: DesiredOptions): KubernetesObject[] {
  const objects: KubernetesObject[] = [
    buildServiceAccount(ctx),
    buildRole(ctx),
    buildRoleBinding(ctx),
    buildConfigMap(ctx),
    ...serviceKinds.map((which) => buildService(ctx, which)),
    buildStatefulSet(ctx),
    buildPodDisruptionBudget(ctx),
  ];
  if (options.serviceMonitorAvailable && ctx.cluster.spec.monitoring.serviceMonitor.enabled) {
    objects.push(buildServiceMonitor(ctx) as KubernetesObject);
  }
  return objects;
}
