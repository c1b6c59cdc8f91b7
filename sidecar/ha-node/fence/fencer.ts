import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../lib/log.js';
import { readFenceDeadline } from './deadline.js';

export interface FencerOptions {
  deadlineFile: string;
  dataDir: string;
  /** The ha-node process; once it is gone and PostgreSQL is down, the fencer exits. */
  parentPid: number;
  pollMs?: number;
  logger: Logger;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fencing process: a separate, tiny process beside ha-node. When the deadline published by the
 * HA loop passes (ha-node frozen, killed or cut off) it stops PostgreSQL with an immediate
 * shutdown (SIGQUIT to the postmaster, SIGKILL if that does not work within a second), so that a
 * primary never outlives the lease it held.
 */
export function runFencer(options: FencerOptions): Promise<void> {
  const poll = options.pollMs ?? 100;
  return new Promise((resolve) => {
    let fencedPid: number | undefined;
    const timer = setInterval(() => {
      const deadline = readFenceDeadline(options.deadlineFile) ?? 0;
      const pid = postmasterPid(options.dataDir);
      if (pid && deadline > 0 && Date.now() > deadline && fencedPid !== pid) {
        fencedPid = pid;
        options.logger.warn({ pid, overdueMs: Date.now() - deadline }, 'ha-node heartbeat overdue: stopping PostgreSQL');
        try {
          process.kill(pid, 'SIGQUIT');
        } catch {
          // already gone
        }
        setTimeout(() => {
          if (alive(pid)) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // already gone
            }
          }
        }, 1000).unref();
      }
      if (!pid) fencedPid = undefined;
      if (!alive(options.parentPid) && !pid) {
        clearInterval(timer);
        resolve();
      }
    }, poll);
  });
}
