/**
 * Container restart back-off as the kubelet does it: the first restart happens at once, later
 * ones wait 10 s, 20 s, 40 s … capped at 5 min (CrashLoopBackOff). A container that stayed up for
 * `resetAfterMs` (twice the cap, like the kubelet's back-off GC) starts over at zero.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

export const kubeletBackoff: BackoffPolicy = { initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 };

/** Delay before restart number `failures` (1 = the first restart after the first exit). */
export function restartDelayMs(policy: BackoffPolicy, failures: number): number {
  if (failures <= 1) return 0;
  const delay = policy.initialMs * 2 ** (failures - 2);
  return Math.min(delay, policy.maxMs);
}

/** Tracks consecutive failures of one container and answers how long to wait before the next start. */
export class RestartBackoff {
  private failures = 0;

  constructor(private readonly policy: BackoffPolicy = kubeletBackoff) {}

  /** Records an exit after a run of `ranForMs` and returns the delay before the next start. */
  onExit(ranForMs: number): number {
    if (ranForMs >= this.policy.resetAfterMs) this.failures = 0;
    this.failures += 1;
    return restartDelayMs(this.policy, this.failures);
  }

  get consecutiveFailures(): number {
    return this.failures;
  }
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export function shouldRestart(policy: string | undefined, exitCode: number): boolean {
  const effective = (policy ?? 'Always') as RestartPolicy;
  if (effective === 'Always') return true;
  if (effective === 'OnFailure') return exitCode !== 0;
  return false;
}
