import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PdbApiVersion } from '../capabilities.js';
import { poolerSelector } from '../../api/naming.js';
import { clusterNames, ownedMeta, poolerPartLabel, type BuildContext } from './context.js';

/** Drains take one pooler pod at a time, so with two or more the pooler Service always has one. */
export function buildPoolerPodDisruptionBudget(ctx: BuildContext, apiVersion: PdbApiVersion = 'policy/v1', readOnly = false): V1PodDisruptionBudget {
  const n = clusterNames(ctx);
  return {
    apiVersion,
    kind: 'PodDisruptionBudget',
    metadata: ownedMeta(
      ctx,
      readOnly ? n.poolerReadOnlyPodDisruptionBudget : n.poolerPodDisruptionBudget,
      readOnly ? 'pooler-ro-pdb' : 'pooler-pdb',
      poolerPartLabel(readOnly),
    ),
    spec: { maxUnavailable: 1, selector: { matchLabels: poolerSelector(ctx.cluster.metadata.name, readOnly) } },
  };
}
