import type { KubernetesObject } from '@kubernetes/client-node';
import type { ServerCapabilities } from '../capabilities.js';
import { buildConfigMap } from './configmap.js';
import type { BuildContext } from './context.js';
import { buildPodDisruptionBudget } from './pdb.js';
import { buildPoolerConfigMap } from './pooler-configmap.js';
import { buildPoolerDeployment } from './pooler-deployment.js';
import { buildPoolerPodDisruptionBudget } from './pooler-pdb.js';
import { buildPoolerService, poolerServiceKinds } from './pooler-services.js';
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
  objects.push(...poolerObjects(ctx, options));
  if (options.serviceMonitor && ctx.cluster.spec.monitoring.serviceMonitor.enabled) {
    objects.push(buildServiceMonitor(ctx) as KubernetesObject);
  }
  return objects;
}

/** The pooler's objects when spec.pooler.enabled (ADR 0801); its Secret comes with the others. */
export function poolerObjects(ctx: BuildContext, options: DesiredOptions): KubernetesObject[] {
  if (!ctx.cluster.spec.pooler.enabled) return [];
  const objects: KubernetesObject[] = [
    buildPoolerConfigMap(ctx),
    ...poolerServiceKinds.map((which) => buildPoolerService(ctx, which)),
    buildPoolerDeployment(ctx),
  ];
  if (options.podDisruptionBudget) objects.push(buildPoolerPodDisruptionBudget(ctx, options.podDisruptionBudget));
  const { readOnly, instances } = ctx.cluster.spec.pooler;
  if (readOnly.enabled) {
    objects.push(buildPoolerService(ctx, 'ro'), buildPoolerService(ctx, 'ro-control'), buildPoolerDeployment(ctx, true));
    // One pod alone gains nothing from a budget and would block every drain.
    if (options.podDisruptionBudget && instances > 1) objects.push(buildPoolerPodDisruptionBudget(ctx, options.podDisruptionBudget, true));
  }
  return objects;
}
