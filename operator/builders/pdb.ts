import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { podSelector } from '../naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/** At most one instance voluntarily down at a time (drains never take two members together). */
export function buildPodDisruptionBudget(ctx: BuildContext): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: ownedMeta(ctx, clusterNames(ctx).podDisruptionBudget, 'pdb'),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: podSelector(ctx.cluster.metadata.name) },
    },
  };
}
