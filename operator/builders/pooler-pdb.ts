import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PdbApiVersion } from '../capabilities.js';
import { poolerSelector } from '../naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/** Drains take one pooler pod at a time, so with two or more the pooler Service always has one. */
export function buildPoolerPodDisruptionBudget(ctx: BuildContext, apiVersion: PdbApiVersion = 'policy/v1'): V1PodDisruptionBudget {
  return {
    apiVersion,
    kind: 'PodDisruptionBudget',
    metadata: ownedMeta(ctx, clusterNames(ctx).poolerPodDisruptionBudget, 'pooler-pdb'),
    spec: { maxUnavailable: 1, selector: { matchLabels: poolerSelector(ctx.cluster.metadata.name) } },
  };
}
