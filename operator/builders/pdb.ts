import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PdbApiVersion } from '../capabilities.js';
import { podSelector } from '../../api/naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/**
 * At most one instance voluntarily down at a time (drains never take two members together).
 * The spec is the same in policy/v1 and policy/v1beta1 (servers before 1.21 serve only the latter).
 */
export function buildPodDisruptionBudget(ctx: BuildContext, apiVersion: PdbApiVersion = 'policy/v1'): V1PodDisruptionBudget {
  return {
    apiVersion,
    kind: 'PodDisruptionBudget',
    metadata: ownedMeta(ctx, clusterNames(ctx).podDisruptionBudget, 'pdb'),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: podSelector(ctx.cluster.metadata.name) },
    },
  };
}
