/**
 * Probe timing and result state with Kubernetes semantics:
 * - the first probe runs `initialDelaySeconds` after the container started, then every `periodSeconds`;
 * - a probe attempt that takes longer than `timeoutSeconds` is a failure;
 * - the result flips to failure after `failureThreshold` consecutive failures and to success after
 *   `successThreshold` consecutive successes (always 1 for liveness and startup probes);
 * - before the first flip, readiness and startup count as failed and liveness as succeeded.
 */
import type { V1Probe } from '@kubernetes/client-node';

export type ProbeKind = 'startup' | 'liveness' | 'readiness';

export interface ProbeTiming {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** Applies the API defaults (period 10 s, timeout 1 s, thresholds 1 and 3). */
export function probeTiming(probe: V1Probe, kind: ProbeKind): ProbeTiming {
  const seconds = (value: number | undefined, fallback: number, min: number): number => Math.max(value ?? fallback, min) * 1000;
  const successThreshold = kind === 'readiness' ? Math.max(probe.successThreshold ?? 1, 1) : 1;
  return {
    initialDelayMs: seconds(probe.initialDelaySeconds, 0, 0),
    periodMs: seconds(probe.periodSeconds, 10, 1),
    timeoutMs: seconds(probe.timeoutSeconds, 1, 1),
    successThreshold,
    failureThreshold: Math.max(probe.failureThreshold ?? 3, 1),
  };
}

/** When the next attempt is due, given the container start and the previous attempt (if any). */
export function nextProbeAt(timing: ProbeTiming, startedAt: number, lastAttemptAt?: number): number {
  if (lastAttemptAt === undefined) return startedAt + timing.initialDelayMs;
  return lastAttemptAt + timing.periodMs;
}

export type ProbeResult = 'success' | 'failure';

export class ProbeState {
  private successes = 0;
  private failures = 0;
  private current: ProbeResult;

  constructor(
    readonly kind: ProbeKind,
    readonly timing: ProbeTiming,
  ) {
    this.current = kind === 'liveness' ? 'success' : 'failure';
  }

  get result(): ProbeResult {
    return this.current;
  }

  /** Records one attempt; returns true when the overall result changed. */
  record(ok: boolean): boolean {
    if (ok) {
      this.successes += 1;
      this.failures = 0;
      if (this.current !== 'success' && this.successes >= this.timing.successThreshold) {
        this.current = 'success';
        return true;
      }
    } else {
      this.failures += 1;
      this.successes = 0;
      if (this.current !== 'failure' && this.failures >= this.timing.failureThreshold) {
        this.current = 'failure';
        return true;
      }
      // Liveness and startup act on every threshold crossing, not only on a flip.
      if (this.kind !== 'readiness' && this.failures >= this.timing.failureThreshold) return true;
    }
    return false;
  }

  /** Consecutive failures so far (for messages). */
  get consecutiveFailures(): number {
    return this.failures;
  }
}
