/**
 * Bounds the operator adds to a cluster's WAL settings so its volumes cannot fill: how much WAL a
 * replication slot may hold back, and max_wal_size, min_wal_size and wal_keep_size on small volumes.
 */
import { quantityBytes } from '../../api/crd/quantity.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import { defaultWalKeepMb } from '../../api/ha-node/dynamic-config.js';

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

/**
 * PostgreSQL's defaults can overflow a small WAL volume: it recycles up to min_wal_size (80MB),
 * lets WAL grow to max_wal_size (1GB) between checkpoints, and ha-node keeps defaultWalKeepMb for
 * reconnecting replicas. On a walStorage volume of 96Mi the segments a first backup's switches
 * leave are kept, and PostgreSQL can then not even start. So, on the WAL's own volume:
 * max_wal_size half of it (at most 1GB), min_wal_size and wal_keep_size a quarter (min_wal_size
 * between two segments and 80MB, wal_keep_size at most ha-node's default). On a data volume that
 * also holds the data only wal_keep_size is bounded, by the same quarter, and only where that is
 * below ha-node's default (volumes under 512Mi).
 */
export function walSizeBounds(cluster: Pick<DatabaseCluster, 'spec'>): Record<string, string> {
  const quarterMb = (size: string | undefined) => Math.floor((quantityBytes(size) ?? 0) / 4 / 1024 / 1024);
  const walKeep = (mb: number) => `${Math.max(segmentMb, Math.min(defaultWalKeepMb, mb))}MB`;
  if (!cluster.spec.walStorage) {
    const quarter = quarterMb(cluster.spec.storage.size);
    return quarter < defaultWalKeepMb ? { wal_keep_size: walKeep(quarter) } : {};
  }
  const quarter = quarterMb(cluster.spec.walStorage.size);
  const max = Math.min(1024, Math.max(2 * segmentMb, 2 * quarter));
  const min = Math.min(80, max, Math.max(2 * segmentMb, quarter));
  return { max_wal_size: `${max}MB`, min_wal_size: `${min}MB`, wal_keep_size: walKeep(quarter) };
}

/** The spec's parameters with the operator's bounds (slot retention, WAL sizes) added where the user set none. */
export function parametersWithWalBounds(cluster: Pick<DatabaseCluster, 'spec'>): Record<string, string> {
  const parameters = cluster.spec.postgresql.parameters;
  const named = new Set(Object.keys(parameters).map((name) => name.toLowerCase()));
  const bounds: Record<string, string> = { max_slot_wal_keep_size: slotWalKeepSize(cluster), ...walSizeBounds(cluster) };
  const added = Object.fromEntries(Object.entries(bounds).filter(([name]) => !named.has(name)));
  return { ...added, ...parameters };
}
