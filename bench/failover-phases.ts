/**
 * Where the time of one crash failover goes, read back from the new primary's JSON log lines
 * (pino `time`, epoch ms or ISO; every process runs on this machine, so one clock serves all).
 */
export interface CrashPhases {
  /** kill → the instant the old leader's lease lapsed (its last renewTime + ttl). */
  toExpiry?: number;
  /** kill → the new leader's loop woke for the failover (expiry timer or crash evidence). */
  toNoticed?: number;
  /** Asking the peers' /ha and writing the lease. */
  race?: number;
  /** pg_promote until the server left recovery. */
  promote?: number;
  /** kill → the new leader logged its promotion. */
  toPromoted?: number;
  /** How the new leader took over: expiry race or early takeover on crash evidence. */
  path?: string;
}

interface LogLine {
  time: number | string;
  msg?: string;
  reason?: string;
  askPeersMs?: number;
  acquireMs?: number;
  promoteMs?: number;
  evidence?: unknown;
}

function parseLines(log: string, since: number): LogLine[] {
  const lines: LogLine[] = [];
  for (const text of log.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      const line = JSON.parse(text) as LogLine;
      const time = typeof line.time === 'string' ? Date.parse(line.time) : line.time;
      if (time >= since) lines.push({ ...line, time });
    } catch {
      // a line cut by the kill
    }
  }
  return lines;
}

/** Phases of the failover that started with a kill at `killedAt` (epoch ms). */
export function crashPhases(newLeaderLog: string, killedAt: number, lastRenewEpoch: number | undefined, ttlSeconds: number): CrashPhases {
  const lines = parseLines(newLeaderLog, killedAt);
  const phases: CrashPhases = {};
  if (lastRenewEpoch !== undefined) phases.toExpiry = (lastRenewEpoch + ttlSeconds * 1000 - killedAt) / 1000;
  const won = lines.find((l) => l.msg === 'won the leader race');
  const woke = lines.find((l) => l.msg === 'loop woken' && (l.reason === 'leader-expired' || l.reason === 'leader-pod-changed'));
  if (woke) phases.toNoticed = (Number(woke.time) - killedAt) / 1000;
  if (won) {
    phases.race = ((won.askPeersMs ?? 0) + (won.acquireMs ?? 0)) / 1000;
    phases.promote = (won.promoteMs ?? 0) / 1000;
    phases.path = won.evidence ? 'takeover' : 'expiry';
  }
  const promoted = lines.find((l) => l.msg === 'promoted');
  if (promoted) phases.toPromoted = (Number(promoted.time) - killedAt) / 1000;
  return phases;
}

export function formatPhases(p: CrashPhases): string {
  const f = (v: number | undefined): string => (v === undefined ? '   -' : v.toFixed(2).padStart(5));
  return `expiry ${f(p.toExpiry)} | noticed ${f(p.toNoticed)} | race ${f(p.race)} | promote ${f(p.promote)} | promoted ${f(p.toPromoted)} | ${p.path ?? '?'}`;
}

/** A clean hand-over, in seconds from the last acknowledged write on the old primary. */
export interface HandOverPhases {
  /** The old primary's fast stop finished (shutdown checkpoint written). */
  stopped?: number;
  /** Its lease release landed. */
  released?: number;
  /** The winner's loop woke on the released lease. */
  woke?: number;
  /** Asking the peers' /ha and writing the lease. */
  race?: number;
  /** First acknowledged write on the new primary (the write gap). */
  gap: number;
}

export function handOverPhases(oldLog: string, winnerLog: string, gapStart: number, gapEnd: number): HandOverPhases {
  const old = parseLines(oldLog, gapStart - 5000);
  const winner = parseLines(winnerLog, gapStart - 5000);
  const at = (line: LogLine | undefined): number | undefined => (line ? (Number(line.time) - gapStart) / 1000 : undefined);
  const released = old.find((l) => l.msg === 'released the leader lease');
  const wokeLine = winner.find(
    (l) => l.msg === 'loop woken' && l.reason === 'leader-changed' && released !== undefined && Number(l.time) >= Number(released.time),
  );
  const won = winner.find((l) => l.msg === 'won the leader race' && Number(l.time) >= gapStart);
  return {
    stopped: at(old.find((l) => l.msg === 'primary stopped; releasing the leader lease')),
    released: at(released),
    woke: at(wokeLine),
    race: won ? ((won.askPeersMs ?? 0) + (won.acquireMs ?? 0)) / 1000 : undefined,
    gap: (gapEnd - gapStart) / 1000,
  };
}

export function formatHandOver(p: HandOverPhases): string {
  const f = (v: number | undefined): string => (v === undefined ? '   -' : v.toFixed(2).padStart(5));
  return `stopped ${f(p.stopped)} | released ${f(p.released)} | woke ${f(p.woke)} | race ${f(p.race)} | first write ${f(p.gap)}`;
}
