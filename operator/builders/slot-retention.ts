import { quantityBytes } from '../../api/crd/quantity.js';
import type { DatabaseCluster } from '../../api/crd/types.js';

/**
 * max_slot_wal_keep_size from the spec: unless spec.postgresql.parameters sets it, a replication
 * slot may hold back at most a quarter of the WAL's volume (walStorage, else storage) in WAL (at least one 16 MB
 * segment), so a dead replica's slot cannot fill the primary's disk. A replica that falls further
 * behind loses its slot and catches up from the archive or is cloned again.
 */
export const slotWalShareOfVolume = 0.25;
const segmentMb = 16;

export function slotWalKeepSize(cluster: Pick<DatabaseCluster, 'spec'>): string {
  // WAL lives on its own volume with walStorage, in the data volume otherwise.
  const bytes = quantityBytes(cluster.spec.walStorage?.size ?? cluster.spec.storage.size) ?? 0;
  return `${Math.max(segmentMb, Math.floor((bytes * slotWalShareOfVolume) / 1024 / 1024))}MB`;
}

/** The spec's parameters with the bounded slot retention added when the user chose none. */
export function parametersWithSlotBound(cluster: Pick<DatabaseCluster, 'spec'>): Record<string, string> {
  const parameters = cluster.spec.postgresql.parameters;
  if (Object.keys(parameters).some((name) => name.toLowerCase() === 'max_slot_wal_keep_size')) return parameters;
  return { max_slot_wal_keep_size: slotWalKeepSize(cluster), ...parameters };
}
