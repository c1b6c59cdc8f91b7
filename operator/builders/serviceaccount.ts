import type { V1ServiceAccount } from '@kubernetes/client-node';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/** The identity of the database pods; ha-node uses it to hold Leases and label its pod. */
export function buildServiceAccount(ctx: BuildContext): V1ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: ownedMeta(ctx, clusterNames(ctx).serviceAccount, 'serviceaccount'),
  };
}
