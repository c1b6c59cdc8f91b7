/**
 * Where a planned switchover's client stall goes, read from the two ha-node logs of one run: the
 * old primary's "switchover phases" line (PAUSE, shutdown, lock release, wait for the new
 * primary, repoint, RESUME) and the candidate's "PostgreSQL takes writes" line. Both processes
 * log on the same clock, so the wait for the new primary splits into the candidate's reaction
 * (seeing the release, taking the lock), its promotion, and the old primary noticing it (which
 * can come out a few ms below zero: the candidate logs after its own 20 ms poll saw the promotion).
 */
export interface SwitchoverPhases {
  pauseMs: number;
  stopMs: number;
  releaseMs: number;
  /** Release → the candidate starts promoting (sees the release, writes the lock). */
  takeLockMs: number;
  promoteMs: number;
  /** The candidate takes writes → the old primary has seen it. */
  noticeMs: number;
  repointMs: number;
  resumeMs: number;
}

interface LogLine {
  /** ISO time (ha-node's loggers) or epoch ms (pino's default). */
  time: string | number;
  msg?: string;
  [key: string]: unknown;
}

function lines(text: string): LogLine[] {
  const out: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    try {
      out.push(JSON.parse(raw) as LogLine);
    } catch {
      // A line cut by the copy, or not a log record.
    }
  }
  return out;
}

/** The phases of the last switchover in these log excerpts, or undefined when a line is missing. */
export function switchoverPhases(oldPrimaryLog: string, candidateLog: string): SwitchoverPhases | undefined {
  const phases = lines(oldPrimaryLog)
    .filter((l) => l.msg === 'switchover phases')
    .at(-1);
  const writable = lines(candidateLog)
    .filter((l) => l.msg === 'PostgreSQL takes writes')
    .at(-1);
  if (!phases || !writable || typeof phases.promotionMs !== 'number' || typeof phases.releasedAt !== 'string') return undefined;
  const num = (value: unknown) => (typeof value === 'number' ? value : Number.NaN);
  const releasedAt = Date.parse(phases.releasedAt);
  const promoteMs = num(writable.promoteMs);
  const writableAt = typeof writable.time === 'number' ? writable.time : Date.parse(writable.time);
  return {
    pauseMs: num(phases.pauseMs),
    stopMs: num(phases.stopMs),
    releaseMs: num(phases.releaseMs),
    takeLockMs: writableAt - promoteMs - releasedAt,
    promoteMs,
    noticeMs: num(phases.promotionMs) - (writableAt - releasedAt),
    repointMs: num(phases.repointMs),
    resumeMs: num(phases.resumeMs),
  };
}

export const phaseColumns = ['PAUSE', 'shutdown', 'release', 'take lock', 'promote', 'notice', 'repoint', 'RESUME'] as const;

export function phaseCells(phases: SwitchoverPhases | undefined): string[] {
  if (!phases) return phaseColumns.map(() => '?');
  const { pauseMs, stopMs, releaseMs, takeLockMs, promoteMs, noticeMs, repointMs, resumeMs } = phases;
  return [pauseMs, stopMs, releaseMs, takeLockMs, promoteMs, noticeMs, repointMs, resumeMs].map((v) => String(Math.round(v)));
}
