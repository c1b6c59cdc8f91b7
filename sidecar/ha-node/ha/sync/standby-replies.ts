import type { ReplicationRow } from '../../postgres/status.js';
import type { EffectiveConfig } from '../settings.js';

/**
 * A synchronous standby is judged by its replies, not by its walsender's presence: a standby cut
 * from the primary keeps its pg_stat_replication row (state 'streaming') until wal_sender_timeout,
 * and every commit waits for it meanwhile. These timings tie both to ttl and loop_wait, so a silent
 * standby leaves synchronous_standby_names (non-strict modes: writes resume) within about ttl.
 */

/** Seconds between a standby's status replies (a standby replies at least this often, even idle). */
export function replyIntervalSeconds(config: Pick<EffectiveConfig, 'loop_wait'>): number {
  return Math.min(10, Math.max(1, Math.floor(config.loop_wait)));
}

/** How long a standby may stay silent before the primary stops counting it as streaming. */
export function replySilenceBoundMs(config: Pick<EffectiveConfig, 'ttl' | 'loop_wait'>): number {
  const interval = replyIntervalSeconds(config);
  // Two missed replies plus slack for a loaded machine, and never less than half of ttl.
  return Math.max(2 * interval + 2, config.ttl / 2) * 1000;
}

/** Whether a walsender's standby replied recently enough to count as streaming. */
export function repliesInTime(row: Pick<ReplicationRow, 'state' | 'reply_age_ms'>, boundMs: number): boolean {
  if (row.state !== 'streaming') return false;
  // No reply yet or the field unknown (a server without reply_time): fall back to presence.
  if (row.reply_age_ms === undefined || row.reply_age_ms === null) return true;
  return row.reply_age_ms <= boundMs;
}

/**
 * Replication timeouts derived from ttl (never above PostgreSQL's 60 s defaults), so that the
 * walsender of a vanished standby and the walreceiver of a vanished primary end within about ttl.
 * They sit below every configured parameter: an explicit setting wins.
 */
export function replicationTimeoutParameters(config: Pick<EffectiveConfig, 'ttl' | 'loop_wait'>): Record<string, string> {
  const timeoutMs = Math.round(Math.min(60, Math.max(config.ttl, 2 * replyIntervalSeconds(config) + 2)) * 1000);
  return {
    wal_sender_timeout: `${timeoutMs}ms`,
    wal_receiver_timeout: `${timeoutMs}ms`,
    wal_receiver_status_interval: `${replyIntervalSeconds(config)}s`,
  };
}

/** The parameters PostgreSQL runs with: the derived timeouts, then the configured parameters. */
export function serverParameters(config: Pick<EffectiveConfig, 'ttl' | 'loop_wait' | 'parameters'>): EffectiveConfig['parameters'] {
  return { ...replicationTimeoutParameters(config), ...config.parameters };
}
