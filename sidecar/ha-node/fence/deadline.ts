import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * The contract between the HA loop and the fencing process: one small file holding the epoch-ms
 * instant after which a still-running primary must be stopped ("0" = nothing to fence, this
 * member is not the leader). Written atomically (temp file + rename).
 */
export function writeFenceDeadline(path: string, epochMs: number): void {
  const temp = `${path}.tmp`;
  writeFileSync(temp, `${Math.round(epochMs)}\n`);
  renameSync(temp, path);
}

export function readFenceDeadline(path: string): number | undefined {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When the fence must fire for a renewal that started at `renewStartedEpochMs`: others may take
 * the lock ttl after they saw our write, which landed after it started, so stopping a safety
 * margin before start + ttl keeps one writable primary at any instant.
 */
export function fenceDeadlineFor(renewStartedEpochMs: number, ttlSeconds: number): number {
  const margin = Math.max(1500, ttlSeconds * 1000 * 0.2);
  return renewStartedEpochMs + ttlSeconds * 1000 - margin;
}
