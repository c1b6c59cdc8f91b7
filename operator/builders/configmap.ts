import type { V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { Ports } from '../../lib/ports.js';
import { ConfigKeys } from '../../api/naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';
import { desiredDynamicConfig } from './dynamic-config.js';

/** Where the image keeps the binaries of a PostgreSQL major version (Debian layout). */
export function pgBinDir(postgresVersion: number): string {
  return `/usr/lib/postgresql/${postgresVersion}/bin`;
}

/**
 * The settings file of `keelson ha-node --config` (sidecar/ha-node/config.ts: camelCase keys as
 * its flags; unknown keys are rejected there, so only known keys go in). It holds what is static
 * for a pod: port, binaries, the application owner and database. Identity and credentials come
 * from the pod environment; the owner's password from the mounted <cluster>-app Secret
 * (statefulset.ts). Dynamic settings (spec.ha, spec.postgresql) are not local settings: they live
 * in the DCS, seeded from bootstrapConfig when the cluster is created and changed through
 * PATCH /config afterwards, so a restarted pod never brings back a value the spec dropped.
 */
export function haNodeConfig(ctx: BuildContext): Record<string, unknown> {
  const { spec } = ctx.cluster;
  return {
    pgPort: Ports.postgres,
    pgBin: pgBinDir(spec.postgresVersion),
    database: spec.bootstrap.database,
    appOwner: spec.bootstrap.owner,
    bootstrapConfig: JSON.stringify(desiredDynamicConfig(ctx.cluster, ctx.standby)),
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
