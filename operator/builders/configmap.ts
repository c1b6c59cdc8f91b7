import type { V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { Ports } from '../../lib/ports.js';
import { ConfigKeys } from '../../api/naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';
import type { HaNodeSettingsDocument } from '../../api/ha-node/settings-document.js';
import { haNodeBackupSettings } from './backup.js';
import { desiredDynamicConfig } from './dynamic-config.js';
import { databasePoolerPorts } from './pooler-wiring.js';
import { haNodeTlsSettings } from './tls-volumes.js';

/** Where the image keeps the binaries of a PostgreSQL major version (Debian layout). */
export function pgBinDir(postgresVersion: number): string {
  return `/usr/lib/postgresql/${postgresVersion}/bin`;
}

/**
 * The settings document of `keelson ha-node --config` (api/ha-node/settings-document.ts): every
 * setting the spec controls. What is static for a pod: port, binaries, the application owner and
 * database, the mounted TLS Secrets' folders; what ha-node reads only at start: the pgBackRest settings and the pooler ports (the
 * pod template carries their digest, so a change rolls the pods, statefulset.ts). Identity and
 * credentials come from the pod environment; the owner's password from the mounted <cluster>-app
 * Secret. Dynamic settings (spec.ha, spec.postgresql) are not local settings: they live in the
 * DCS, seeded from bootstrapConfig when the cluster is created and changed through PATCH /config
 * afterwards, so a restarted pod never brings back a value the spec dropped.
 */
export function haNodeConfig(ctx: BuildContext): HaNodeSettingsDocument {
  const { spec } = ctx.cluster;
  const backup = haNodeBackupSettings(ctx);
  return {
    pgPort: Ports.postgres,
    pgBin: pgBinDir(spec.postgresVersion),
    database: spec.bootstrap.database,
    appOwner: spec.bootstrap.owner,
    bootstrapConfig: desiredDynamicConfig(ctx.cluster, ctx.standby),
    ...(backup ? { backup } : {}),
    ...databasePoolerPorts(ctx),
    ...haNodeTlsSettings(ctx),
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
