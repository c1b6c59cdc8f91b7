import { pg, type Client } from '../../../lib/pg.js';
import type { Logger } from '../../../lib/log.js';
import { exporterTypes } from '../scrape/connection.js';

export type TargetState = 'unknown' | 'down' | 'starting' | 'primary' | 'replica';

export const isAvailable = (state: TargetState): boolean => state === 'primary' || state === 'replica';

export interface HealthProbeSettings {
  url: string;
  /** Time between probes (pg_exporter: 1 s). */
  intervalMs: number;
  /** Bound on connect + query (pg_exporter: --connect-timeout). */
  timeoutMs: number;
  /** Target is a pgbouncer admin console: probe with SHOW VERSION; an answer means primary. */
  pgbouncer?: boolean;
  logger: Logger;
}

/**
 * The cached target state behind every health endpoint. A background loop asks
 * `pg_is_in_recovery()` on its own connection; requests only read `state`, never probe.
 * SQLSTATE 57P03 (cannot connect now: starting up, or a standby without hot_standby) → starting.
 */
export class HealthProbe {
  private current: TargetState = 'unknown';
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;

  constructor(private readonly settings: HealthProbeSettings) {}

  get state(): TargetState {
    return this.current;
  }

  /** Scrapes also learn the state; like pg_exporter, the latest observation wins. */
  set(state: TargetState): void {
    if (state !== this.current) this.settings.logger.info({ from: this.current, to: state }, 'target state changed');
    this.current = state;
  }

  start(): void {
    this.stopped = false;
    void this.tick();
  }

  /** Runs one probe now (also used by the loop). */
  async probeOnce(): Promise<TargetState> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`probe timed out after ${this.settings.timeoutMs} ms`)), this.settings.timeoutMs);
      });
      const inRecovery = await Promise.race([this.ask(), deadline]);
      this.set(inRecovery ? 'replica' : 'primary');
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      this.set(code === '57P03' ? 'starting' : 'down');
      this.settings.logger.debug({ err: (error as Error).message, code }, 'health probe failed');
      this.dropClient();
    } finally {
      if (timer) clearTimeout(timer);
    }
    return this.current;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (!this.running) {
      this.running = true;
      try {
        await this.probeOnce();
      } finally {
        this.running = false;
      }
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.settings.intervalMs);
    this.timer.unref();
  }

  private async ask(): Promise<boolean> {
    if (!this.client) {
      const client = new pg.Client({
        connectionString: this.settings.url,
        types: exporterTypes,
        application_name: 'pg_exporter_probe',
        connectionTimeoutMillis: this.settings.timeoutMs,
      });
      client.on('error', () => this.dropClient());
      this.client = client;
      await client.connect();
    }
    if (this.settings.pgbouncer) {
      await this.client.query('SHOW VERSION');
      return false;
    }
    const result = await this.client.query({ text: 'SELECT pg_catalog.pg_is_in_recovery()', rowMode: 'array' });
    return (result.rows[0] as string[])[0] === 't';
  }

  private dropClient(): void {
    const client = this.client;
    this.client = undefined;
    if (client) void client.end().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.dropClient();
  }
}
