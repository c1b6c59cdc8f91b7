import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Stops a postmaster by signalling it and watching its pid file every 10 ms, as `pg_ctl stop -w`
 * does every 100 ms: a planned switchover's clients wait for the stop, so its polling interval
 * came out of their stall (50 ms on average). The postmaster removes postmaster.pid as it exits,
 * which is what pg_ctl itself waits for. Undefined when the signal cannot be sent (another
 * account's process): the caller falls back to pg_ctl.
 */
export type StopMode = 'fast' | 'immediate' | 'smart';

const signals: Record<StopMode, NodeJS.Signals> = { smart: 'SIGTERM', fast: 'SIGINT', immediate: 'SIGQUIT' };

export async function stopBySignal(dataDir: string, pid: number, mode: StopMode, timeoutMs: number, pollMs = 10): Promise<boolean | undefined> {
  try {
    process.kill(pid, signals[mode]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    return undefined;
  }
  const pidFile = join(dataDir, 'postmaster.pid');
  const deadline = Date.now() + timeoutMs;
  while (existsSync(pidFile)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return true;
}
