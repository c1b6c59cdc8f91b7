import type { V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { Ports } from '../../lib/ports.js';
import { ConfigKeys, RoleNames } from '../../api/naming.js';
import type { PoolerSettingsDocument } from '../../api/pooler/settings-document.js';
import { clusterNames, ownedMeta, poolerPartLabel, type BuildContext } from './context.js';
import { poolerTlsSettings } from './tls-volumes.js';

/**
 * The settings file of `keelson pooler --config` (api/pooler/settings-document.ts). PgBouncer first
 * points at the -rw Service (the read-only pooler at -ro); ha-node points it at a new primary
 * directly during a switchover (the read-only one at a streaming replica every cycle). No
 * password is in here: the pooler role's comes from the mounted <cluster>-pooler Secret (its path,
 * like the run folder's, is in the Deployment's environment).
 */
export function poolerConfig(ctx: BuildContext, readOnly = false): PoolerSettingsDocument {
  const { pooler } = ctx.cluster.spec;
  const n = clusterNames(ctx);
  return {
    targetHost: readOnly ? n.roService : n.rwService,
    targetPort: Ports.postgres,
    authUser: RoleNames.pooler,
    poolMode: pooler.mode,
    maxClientConnections: pooler.maxClientConnections,
    defaultPoolSize: pooler.defaultPoolSize,
    parameters: JSON.stringify(pooler.parameters),
    ...poolerTlsSettings(),
  };
}

export function buildPoolerConfigMap(ctx: BuildContext): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: ownedMeta(ctx, clusterNames(ctx).poolerConfigMap, 'pooler-config', poolerPartLabel()),
    data: {
      [ConfigKeys.pooler]: stringify(poolerConfig(ctx), { version: '1.1' }),
      ...(ctx.cluster.spec.pooler.readOnly.enabled ? { [ConfigKeys.poolerReadOnly]: stringify(poolerConfig(ctx, true), { version: '1.1' }) } : {}),
    },
  };
}
