import type { V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { Ports } from '../../lib/ports.js';
import { ConfigKeys, pgdataPath } from '../naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/**
 * The settings file of `keelson ha-node --config` (sidecar/ha-node/config.ts: camelCase keys as
 * its flags; unknown keys are rejected there, so only known keys go in). Identity and credentials
 * come from the pod environment, not from here; the application owner's password from the mounted
 * <cluster>-app Secret (statefulset.ts).
 */
export function haNodeConfig(ctx: BuildContext): Record<string, unknown> {
  const { spec, metadata } = ctx.cluster;
  return {
    scope: metadata.name,
    ttl: spec.ha.ttl,
    loopWait: spec.ha.loopWait,
    retryTimeout: spec.ha.retryTimeout,
    maximumLagOnFailover: spec.ha.maximumLagOnFailover,
    failsafeMode: spec.ha.failsafeMode,
    primaryHangTimeout: spec.ha.primaryHangTimeout,
    synchronousMode: spec.ha.synchronousMode !== 'off',
    pgPort: Ports.postgres,
    dataDir: pgdataPath,
    pgParameters: JSON.stringify(spec.postgresql.parameters),
    database: spec.bootstrap.database,
    appOwner: spec.bootstrap.owner,
  };
}

/** Configuration of the database pod's containers, mounted at /etc/keelson. */
export function buildConfigMap(ctx: BuildContext): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: ownedMeta(ctx, clusterNames(ctx).configMap, 'config'),
    data: { [ConfigKeys.haNode]: stringify(haNodeConfig(ctx), { version: '1.1' }) },
  };
}
