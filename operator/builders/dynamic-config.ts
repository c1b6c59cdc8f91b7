import { durationMs } from '../../api/crd/replica-types.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { DynamicConfigInput, DynamicConfigPatch, StandbyClusterInput } from '../../api/ha-node/dynamic-config.js';
import type { StandbyTarget } from './context.js';
import { parametersWithWalBounds } from './wal-bounds.js';

/**
 * The one mapping of the dynamic spec fields (spec.ha, spec.postgresql) to ha-node's dynamic
 * configuration. It reaches ha-node twice, always with the same content: as the ConfigMap's
 * bootstrapConfig, which seeds the DCS when a new cluster is initialised, and as PATCH /config on
 * the primary for every later change (reconcile/config-sync.ts).
 */

/**
 * The dynamic configuration ha-node should hold (Patroni key names, spec/ha-node-api.md, where
 * the database section is `db`). "strict" is Patroni's synchronous_mode plus synchronous_mode_strict.
 * A standby cluster (spec.replica.enabled, its source resolved to `standby`) adds standby_cluster.
 */
export function desiredDynamicConfig(cluster: DatabaseCluster, standby?: StandbyTarget): DynamicConfigInput {
  const { ha, postgresql } = cluster.spec;
  const config: DynamicConfigInput = {
    ttl: ha.ttl,
    loop_wait: ha.loopWait,
    retry_timeout: ha.retryTimeout,
    maximum_lag_on_failover: ha.maximumLagOnFailover,
    synchronous_mode: ha.synchronousMode === 'strict' ? 'on' : ha.synchronousMode,
    synchronous_mode_strict: ha.synchronousMode === 'strict',
    synchronous_node_count: ha.synchronousNodeCount,
    failsafe_mode: ha.failsafeMode,
    primary_hang_timeout: ha.primaryHangTimeout,
    db: { parameters: parametersWithWalBounds(cluster), pg_hba: postgresql.pg_hba },
    // Role names, attributes and Secret names only: passwords stay in the Secrets ha-node reads.
    ...(cluster.spec.roles.length > 0 ? { roles: cluster.spec.roles } : {}),
  };
  return standby ? { ...config, standby_cluster: standbyCluster(cluster, standby) } : config;
}

function standbyCluster(cluster: DatabaseCluster, standby: StandbyTarget): StandbyClusterInput {
  const delay = cluster.spec.replica?.minApplyDelay;
  return {
    ...(standby.host !== undefined ? { host: standby.host, port: standby.port } : {}),
    ...(standby.host !== undefined && standby.serverName !== undefined ? { server_name: standby.serverName } : {}),
    ...(standby.repository ? { repository: true } : {}),
    ...(delay ? { recovery_min_apply_delay: durationMs(delay) } : {}),
  };
}

/** A /config PATCH body turning `current` into `desired`: parameters no longer wanted are set to null. */
export function configPatch(desired: DynamicConfigInput, current: DynamicConfigInput): DynamicConfigPatch {
  const wantedParams = desired.db?.parameters ?? {};
  const currentParams = current.db?.parameters ?? {};
  const parameters: Record<string, string | number | boolean | null> = { ...wantedParams };
  for (const key of Object.keys(currentParams)) if (!(key in wantedParams)) parameters[key] = null;
  const patch: DynamicConfigPatch = { ...desired, db: { ...desired.db, parameters } };
  if (current.roles !== undefined && desired.roles === undefined) patch.roles = null;
  // Removing standby_cluster promotes the standby leader; a key dropped from it is reset.
  const currentStandby = current.standby_cluster;
  const wantedStandby = desired.standby_cluster;
  if (currentStandby && !wantedStandby) patch.standby_cluster = null;
  else if (currentStandby && wantedStandby) {
    const standby: NonNullable<DynamicConfigPatch['standby_cluster']> = { ...wantedStandby };
    for (const key of Object.keys(currentStandby) as (keyof StandbyClusterInput)[]) if (!(key in wantedStandby)) standby[key] = null;
    patch.standby_cluster = standby;
  }
  return patch;
}
