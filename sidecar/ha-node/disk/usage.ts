/**
 * How full this member's volumes are (ha-node's disk module): bytes used and free of the data
 * volume and, when pg_wal lives on a volume of its own, of the WAL volume; and the verdict drawn
 * from them — nearly full (said in the node document and metrics, before PostgreSQL stops) and
 * full (a replica then never races for the leader lock: it could not take writes).
 */
import { existsSync, realpathSync, statfsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type VolumeName = 'data' | 'wal';

export interface VolumeUsage {
  volume: VolumeName;
  capacityBytes: number;
  usedBytes: number;
  /** What an unprivileged writer (PostgreSQL) can still use. */
  freeBytes: number;
}

/** Used share from which a volume counts as nearly full (the warning). */
export const nearlyFullRatio = 0.9;
/**
 * A volume counts as full when less than this is free: PostgreSQL cannot be relied on to create
 * its next WAL segment or finish a checkpoint, and it stops (a primary) or stops replaying.
 */
export const fullFreeBytes = 4 * 1024 * 1024;
/** …or when it is this share used (large volumes). */
export const fullRatio = 0.99;

function existingAncestor(path: string): string {
  let current = path;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

function usageOf(volume: VolumeName, path: string): VolumeUsage {
  const stats = statfsSync(path);
  const capacityBytes = stats.blocks * stats.bsize;
  return { volume, capacityBytes, usedBytes: (stats.blocks - stats.bfree) * stats.bsize, freeBytes: stats.bavail * stats.bsize };
}

/** The data volume (the one holding the data directory, or its closest existing parent) and a separate WAL volume. */
export function measureVolumes(dataDir: string): VolumeUsage[] {
  const dataPath = existingAncestor(dataDir);
  const volumes = [usageOf('data', dataPath)];
  const wal = join(dataDir, 'pg_wal');
  if (existsSync(wal)) {
    const walPath = realpathSync(wal);
    if (statSync(walPath).dev !== statSync(dataPath).dev) volumes.push(usageOf('wal', walPath));
  }
  return volumes;
}

export const usedRatio = (usage: VolumeUsage): number => (usage.capacityBytes > 0 ? usage.usedBytes / usage.capacityBytes : 0);

export function isFull(usage: VolumeUsage): boolean {
  return usage.capacityBytes > 0 && (usage.freeBytes < fullFreeBytes || usedRatio(usage) >= fullRatio);
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function describe(usage: VolumeUsage): string {
  return `${usage.volume} volume ${Math.round(usedRatio(usage) * 100)}% used (${mib(usage.usedBytes)} of ${mib(usage.capacityBytes)}, ${mib(usage.freeBytes)} free)`;
}

/** Why the volumes need attention, one sentence each; empty when none does. */
export function diskWarnings(volumes: readonly VolumeUsage[]): string[] {
  return volumes.flatMap((usage) => {
    if (isFull(usage)) return [`${describe(usage)}: full, PostgreSQL cannot write; grow the volume`];
    if (usedRatio(usage) >= nearlyFullRatio) return [`${describe(usage)}: nearly full, PostgreSQL stops when it is full`];
    return [];
  });
}

/** The first full volume's description, or undefined: a replica with a full volume does not race for the lock. */
export function fullVolume(volumes: readonly VolumeUsage[]): string | undefined {
  const full = volumes.find(isFull);
  return full ? describe(full) : undefined;
}

/**
 * Usage as the member record publishes it: used bytes rounded up to a hundredth of the capacity,
 * so the record (a write to the API server) changes at most a hundred times as a volume fills.
 */
export function publishedUsage(
  volumes: readonly VolumeUsage[],
): Array<{ volume: VolumeName; capacity_bytes: number; used_bytes: number; free_bytes: number; full?: true }> {
  return volumes.map((usage) => {
    const step = Math.max(1, Math.floor(usage.capacityBytes / 100));
    const used = Math.min(usage.capacityBytes, Math.ceil(usage.usedBytes / step) * step);
    return {
      volume: usage.volume,
      capacity_bytes: usage.capacityBytes,
      used_bytes: used,
      free_bytes: Math.max(0, usage.capacityBytes - used),
      ...(isFull(usage) ? { full: true as const } : {}),
    };
  });
}

function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** ha_volume_* metrics, one sample per volume; `labels` is the {scope,name} set of every ha_* sample. */
export function renderVolumeMetrics(volumes: readonly VolumeUsage[], labels: string): string {
  const withVolume = (volume: VolumeName): string => `${labels.slice(0, -1)},volume="${labelValue(volume)}"}`;
  const families: Array<[string, string, (u: VolumeUsage) => number]> = [
    ['ha_volume_capacity_bytes', 'Size of the volume in bytes.', (u) => u.capacityBytes],
    ['ha_volume_used_bytes', 'Bytes used on the volume.', (u) => u.usedBytes],
    ['ha_volume_free_bytes', 'Bytes PostgreSQL can still write on the volume.', (u) => u.freeBytes],
    ['ha_volume_full', 'Value is 1 if the volume is full (PostgreSQL cannot write), 0 otherwise.', (u) => (isFull(u) ? 1 : 0)],
  ];
  const out: string[] = [];
  for (const [name, help, value] of families) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const usage of volumes) out.push(`${name}${withVolume(usage.volume)} ${value(usage)}`);
  }
  return `${out.join('\n')}\n`;
}

/** measureVolumes, or undefined when the filesystem cannot be asked (never fails a loop cycle). */
export function volumesNow(dataDir: string): VolumeUsage[] | undefined {
  try {
    return measureVolumes(dataDir);
  } catch {
    return undefined;
  }
}
