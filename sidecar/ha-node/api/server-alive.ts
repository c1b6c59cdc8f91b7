import { readFileSync } from 'node:fs';
import type { NodeSnapshot } from '../ha/snapshot.js';

/**
 * Whether the postmaster still runs, checked when a health endpoint is asked rather than once a
 * loop: a killed or stopped primary must leave the -rw Service within a second, not after the
 * next cycle (loop_wait later). The check reads postmaster.pid and signals 0 (no SQL, a few
 * microseconds) and its answer is kept for `cacheMs`, so a burst of probes costs one check.
 */
export type ServerAlive = () => boolean;

export function cachedServerAlive(postmasterPid: () => number | undefined, cacheMs = 200, now: () => number = () => performance.now()): ServerAlive {
  let checkedAt = Number.NEGATIVE_INFINITY;
  let alive = true;
  return () => {
    const at = now();
    if (at - checkedAt < cacheMs) return alive;
    checkedAt = at;
    const pid = postmasterPid();
    alive = pid !== undefined && !isZombie(pid);
    return alive;
  };
}

/** A killed postmaster whose parent has not reaped it yet still answers signal 0. */
function isZombie(pid: number): boolean {
  try {
    // /proc/PID/stat: "pid (comm) S ..."; comm may hold spaces and parentheses, the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/**
 * The snapshot as health checks judge it: the loop's, except that a server the loop last saw
 * running and which is gone now counts as crashed (no status, so no role that needs one).
 */
export function withLiveServer(snapshot: NodeSnapshot, alive: ServerAlive | undefined): NodeSnapshot {
  if (!snapshot.status || !alive || alive()) return snapshot;
  return { ...snapshot, status: undefined, dbState: 'crashed' };
}
