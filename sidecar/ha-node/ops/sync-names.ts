/**
 * synchronous_standby_names for the three synchronous modes, plus the quorum a racer needs.
 * Names are quoted as identifiers so member names with dashes work.
 */
export type SyncMode = 'off' | 'on' | 'quorum';

export const strictPlaceholder = '__keelson_strict_sync_placeholder__';

export interface SyncPlan {
  /** Value for synchronous_standby_names ('' = asynchronous). */
  standbyNames: string;
  /** Members the leader publishes in the sync key. */
  syncStandby: string[];
  /** Quorum mode: how many voters a new leader must see (R + W > N). */
  quorum?: number;
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Plans the synchronous standbys from the healthy streaming replicas (best first). Strict mode
 * without a healthy replica keeps a placeholder so commits wait rather than silently go async.
 */
export function planSyncStandbys(mode: SyncMode, strict: boolean, candidates: string[], nodeCount: number): SyncPlan {
  if (mode === 'off') return { standbyNames: '', syncStandby: [] };
  const count = Math.max(1, Math.floor(nodeCount));
  if (mode === 'quorum') {
    if (candidates.length === 0)
      return strict ? { standbyNames: `ANY 1 (${quote(strictPlaceholder)})`, syncStandby: [], quorum: 0 } : { standbyNames: '', syncStandby: [], quorum: 0 };
    const voters = candidates.length;
    const needed = Math.min(count, voters);
    return { standbyNames: `ANY ${needed} (${candidates.map(quote).join(',')})`, syncStandby: [...candidates], quorum: voters - needed };
  }
  const chosen = candidates.slice(0, count);
  if (chosen.length === 0) return strict ? { standbyNames: quote(strictPlaceholder), syncStandby: [] } : { standbyNames: '', syncStandby: [] };
  return { standbyNames: `FIRST ${chosen.length} (${chosen.map(quote).join(',')})`, syncStandby: chosen };
}

/** Members named in a synchronous_standby_names value (FIRST n (...), ANY n (...), or a plain list). */
export function namesIn(standbyNames: string): { method: 'first' | 'any' | 'none'; count: number; names: string[] } {
  const text = standbyNames.trim();
  if (!text) return { method: 'none', count: 0, names: [] };
  const match = /^(?:(FIRST|ANY)\s+)?(?:(\d+)\s*\(([^)]*)\)|(.*))$/is.exec(text);
  const method = match?.[1]?.toUpperCase() === 'ANY' ? 'any' : 'first';
  const list = match?.[3] ?? match?.[4] ?? '';
  const names = list
    .split(',')
    .map((n) =>
      n
        .trim()
        .replace(/^"(.*)"$/s, '$1')
        .replace(/""/g, '"'),
    )
    .filter((n) => n.length > 0 && n !== strictPlaceholder);
  const count = match?.[2] ? Number(match[2]) : 1;
  return { method, count, names };
}
