import type { NodeSnapshot } from '../ha/snapshot.js';
import type { ServerStatus } from '../postgres/status.js';

/**
 * WAL positions read at request time for the node document. The HA loop refreshes its snapshot
 * once per cycle (loop_wait), but peers judge a switchover or an election from this document, as
 * Patroni's members query PostgreSQL per request: a replica that caught up a moment ago must not
 * look a cycle behind. Requests arriving together share one query, so a flood of GETs costs one
 * connection at a time; a failed or slow query falls back to the loop's snapshot.
 */
export class LiveWal {
  private inFlight: Promise<ServerStatus | undefined> | undefined;

  constructor(
    private readonly read: () => Promise<ServerStatus>,
    private readonly timeoutMs = 1000,
  ) {}

  /** The snapshot with the positions of a fresh status query, when the server runs in the same mode. */
  async refresh(snapshot: NodeSnapshot): Promise<NodeSnapshot> {
    const cached = snapshot.status;
    if (!cached) return snapshot;
    const fresh = await this.query();
    return fresh ? { ...snapshot, status: withFreshPositions(cached, fresh) } : snapshot;
  }

  private query(): Promise<ServerStatus | undefined> {
    this.inFlight ??= this.readWithTimeout().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async readWithTimeout(): Promise<ServerStatus | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.timeoutMs);
    });
    try {
      return await Promise.race([this.read().catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Takes only the WAL positions (and replay state) of the fresh read, and only while the server is
 * in the mode the loop last saw: a role change (promotion, demotion) is the loop's to report.
 */
export function withFreshPositions(cached: ServerStatus, fresh: ServerStatus): ServerStatus {
  if (fresh.inRecovery !== cached.inRecovery || fresh.systemIdentifier !== cached.systemIdentifier) return cached;
  return {
    ...cached,
    location: fresh.location,
    receivedLocation: fresh.receivedLocation,
    replayedLocation: fresh.replayedLocation,
    replayedTimestamp: fresh.replayedTimestamp,
    paused: fresh.paused,
    timeline: fresh.timeline,
  };
}
