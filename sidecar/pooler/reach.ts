import { connect } from 'node:net';

/**
 * Whether the pooler's PostgreSQL accepts connections: a TCP connect, bounded, remembered for a
 * second so status polls and scrapes cost the server at most one connection a second.
 */
export function canConnect(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export class ReachCache {
  private last: { key: string; at: number; ok: Promise<boolean> } | undefined;

  constructor(
    private readonly maxAgeMs = 1000,
    private readonly timeoutMs = 1000,
  ) {}

  check(host: string, port: number): Promise<boolean> {
    const key = `${host}:${port}`;
    const now = Date.now();
    if (this.last && this.last.key === key && now - this.last.at < this.maxAgeMs) return this.last.ok;
    const ok = canConnect(host, port, this.timeoutMs);
    this.last = { key, at: now, ok };
    return ok;
  }
}

/** The pooler's own samples (PgBouncer's come from the exporter beside it). */
export function renderPoolerMetrics(state: { paused: boolean; reachable: boolean; pauses: number }): string {
  return [
    '# HELP keelson_pooler_paused 1 while a switchover holds this pooler paused (clients wait, none fail)',
    '# TYPE keelson_pooler_paused gauge',
    `keelson_pooler_paused ${state.paused ? 1 : 0}`,
    '# HELP keelson_pooler_target_reachable 1 when the PostgreSQL server the pooler points at accepts connections',
    '# TYPE keelson_pooler_target_reachable gauge',
    `keelson_pooler_target_reachable ${state.reachable ? 1 : 0}`,
    '# HELP keelson_pooler_pauses_total pauses since the pooler started',
    '# TYPE keelson_pooler_pauses_total counter',
    `keelson_pooler_pauses_total ${state.pauses}`,
    '',
  ].join('\n');
}
