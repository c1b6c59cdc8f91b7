import type { KubernetesObject } from '@kubernetes/client-node';
import type { ServerCapabilities } from '../capabilities.js';
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

/** What the API server serves (see operator/capabilities.ts). */
export type DesiredOptions = ServerCapabilities;

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
  ];
  if (options.podDisruptionBudget) objects.push(buildPodDisruptionBudget(ctx, options.podDisruptionBudget));
  if (options.serviceMonitor && ctx.cluster.spec.monitoring.serviceMonitor.enabled) {
    objects.push(buildServiceMonitor(ctx) as KubernetesObject);
  }
  return objects;
}
