import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { backupCrd, databaseClusterCrd } from './crd.js';
import { databaseCrd } from './database-crd.js';

/** Every CustomResourceDefinition Keelson installs, in the order crds/ and the chart list them. */
export function allCrds(): V1CustomResourceDefinition[] {
  return [databaseClusterCrd(), backupCrd(), databaseCrd()];
}
