import type { V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { Ports } from '../../lib/ports.js';
import { ConfigKeys, pgdataPath } from '../naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

/** The ha-node configuration document: cluster scope, HA timings, bootstrap and PostgreSQL settings. */
export function haNodeConfig(ctx: BuildContext): Record<string, unknown> {
  const { spec, metadata } = ctx.cluster;
  const n = clusterNames(ctx);
  return {
    scope: metadata.name,
    namespace: metadata.namespace,
    restApi: { port: Ports.haNodeApi },
    dcs: {
      leaderLease: n.leaderLease,
      ttl: spec.ha.ttl,
      loopWait: spec.ha.loopWait,
      retryTimeout: spec.ha.retryTimeout,
      maximumLagOnFailover: spec.ha.maximumLagOnFailover,
      synchronousMode: spec.ha.synchronousMode,
      synchronousNodeCount: spec.ha.synchronousNodeCount,
      failsafeMode: spec.ha.failsafeMode,
    },
    bootstrap: { database: spec.bootstrap.database, owner: spec.bootstrap.owner },
    postgresql: {
      port: Ports.postgres,
      dataDir: pgdataPath,
      parameters: spec.postgresql.parameters,
      pgHba: spec.postgresql.pg_hba,
    },
  };
}

export function exporterConfig(ctx: BuildContext): Record<string, unknown> {
  return {
    listen: `:${Ports.exporter}`,
    url: `postgresql://127.0.0.1:${Ports.postgres}/postgres`,
    collectorsFromConfigMap: ctx.cluster.spec.exporter.collectors?.configMapName ?? null,
  };
}

/** Configuration for the two containers of the database pod, mounted at /etc/keelson. */
export function buildConfigMap(ctx: BuildContext): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: ownedMeta(ctx, clusterNames(ctx).configMap, 'config'),
    data: {
      [ConfigKeys.haNode]: stringify(haNodeConfig(ctx)),
      [ConfigKeys.exporter]: stringify(exporterConfig(ctx)),
    },
  };
}
