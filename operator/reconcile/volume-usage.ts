import type { VolumeUsageStatus } from '../../api/crd/storage-types.js';
import type { MemberStatus } from '../../api/crd/types.js';
import type { HaClusterMember, HaVolume } from '../hanode-client.js';

/** Volume usage in status: each member's volumes, and the one-line summary `kubectl get dbc` shows. */

/** status.members[].volumes from ha-node's published record. */
export function memberVolumes(ha: HaClusterMember | undefined): VolumeUsageStatus[] | undefined {
  if (!Array.isArray(ha?.volumes)) return undefined;
  return ha.volumes.map((v: HaVolume) => ({
    volume: v.volume,
    capacityBytes: v.capacity_bytes,
    usedBytes: v.used_bytes,
    freeBytes: v.free_bytes,
    ...(v.full ? { full: true } : {}),
  }));
}

/** "demo-0 61%, demo-1 58% (wal 93%)": each member's data volume use, other volumes when they differ; undefined without reports. */
export function usageSummary(members: readonly MemberStatus[]): string | undefined {
  const parts = members.flatMap((m) => {
    const volumes = m.volumes ?? [];
    const data = volumes.find((v) => v.volume === 'data');
    if (!data || data.capacityBytes <= 0) return [];
    const share = (v: VolumeUsageStatus): string => `${Math.round((v.usedBytes / v.capacityBytes) * 100)}%`;
    const others = volumes.filter((v) => v.volume !== 'data' && v.capacityBytes > 0).map((v) => `${v.volume} ${share(v)}`);
    return [`${m.name} ${share(data)}${others.length ? ` (${others.join(', ')})` : ''}`];
  });
  return parts.length > 0 ? parts.join(', ') : undefined;
}
