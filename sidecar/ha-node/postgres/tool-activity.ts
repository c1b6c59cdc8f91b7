import { readFileSync } from 'node:fs';

/**
 * The PostgreSQL tools ha-node is running right now (pg_ctl, pg_rewind, single-user crash
 * recovery, pg_basebackup). A cycle that demotes, recovers and rewinds can run far longer than
 * ttl; liveness counts it as alive while one of these runs and is not stopped (every run has its
 * own timeout, so this is bounded). A loop stuck elsewhere, or on a stopped (frozen) tool, shows
 * no progress.
 */
export class ToolActivity {
  private readonly running = new Set<number>();
  private lastChangeAt: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.lastChangeAt = now();
  }

  started(pid: number | undefined): void {
    if (pid !== undefined) this.running.add(pid);
    this.lastChangeAt = this.now();
  }

  finished(pid: number | undefined): void {
    if (pid !== undefined) this.running.delete(pid);
    this.lastChangeAt = this.now();
  }

  /** Monotonic time of the latest progress: now while a tool runs, else when one last started or ended. */
  lastProgressAt(isStopped: (pid: number) => boolean = processStopped): number {
    for (const pid of this.running) if (!isStopped(pid)) return this.now();
    return this.lastChangeAt;
  }
}

/** Whether a process is stopped (SIGSTOP, a debugger); false when it cannot be told (no /proc). */
export function processStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the command name, which is in parentheses and may contain spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}
