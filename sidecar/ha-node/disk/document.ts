import type { NodeSnapshot } from '../ha/snapshot.js';
import { diskWarnings, isFull, volumesNow, type VolumeUsage } from './usage.js';

/** The snapshot with its volumes measured now (the API answers between loop cycles). */
export function withLiveVolumes(snapshot: NodeSnapshot, dataDir: string | undefined): NodeSnapshot {
  const volumes = dataDir ? volumesNow(dataDir) : undefined;
  return volumes ? { ...snapshot, volumes } : snapshot;
}

/**
 * The node document's part about volumes (GET /ha and every health endpoint): usage per volume,
 * the warnings in words, and `disk_full` — which peers read in a leader race.
 */
export function volumesSection(volumes: readonly VolumeUsage[] | undefined): { volumes?: unknown[]; disk_warnings?: string[]; disk_full?: true } {
  if (!volumes || volumes.length === 0) return {};
  const section: { volumes: unknown[]; disk_warnings?: string[]; disk_full?: true } = {
    volumes: volumes.map((u) => ({ volume: u.volume, capacity_bytes: u.capacityBytes, used_bytes: u.usedBytes, free_bytes: u.freeBytes })),
  };
  const warnings = diskWarnings(volumes);
  if (warnings.length > 0) section.disk_warnings = warnings;
  if (volumes.some(isFull)) section.disk_full = true;
  return section;
}
