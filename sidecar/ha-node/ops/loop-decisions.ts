import type { DynamicConfig, FailoverRecord } from '../dcs/types.js';

/**
 * Small decisions the HA loop needs for the operations of issue 7, kept pure so the loop can
 * call them without knowing the API. See docs/adr/0601 for where each one plugs in.
 */

/** Pause mode: automatic failover is off while the dynamic configuration has `pause: true`. */
export function isPaused(config: DynamicConfig | undefined): boolean {
  return config?.pause === true;
}

export type ManualFailoverTiming = { kind: 'now' } | { kind: 'wait'; ms: number } | { kind: 'stale' };

/**
 * When the leader should act on a failover key: at once without scheduled_at, at the scheduled
 * time otherwise. A schedule that passed long ago (the leader was down) is stale and must be
 * cleaned up rather than executed by surprise; "long" is max(30 s, 2 * loop_wait).
 */
export function manualFailoverTiming(failover: FailoverRecord, now: Date, loopWaitSeconds: number, paused: boolean): ManualFailoverTiming {
  if (!failover.scheduled_at) return { kind: 'now' };
  const at = Date.parse(failover.scheduled_at);
  if (Number.isNaN(at)) return { kind: 'stale' };
  const delta = at - now.getTime();
  if (paused) return { kind: 'wait', ms: Math.max(delta, loopWaitSeconds * 1000) };
  if (delta > 0) return { kind: 'wait', ms: delta };
  if (-delta > Math.max(30_000, 2 * loopWaitSeconds * 1000)) return { kind: 'stale' };
  return { kind: 'now' };
}

/** Whether the automatic leader race may run (a manual failover naming a candidate still may). */
export function raceAllowed(config: DynamicConfig | undefined, failover: FailoverRecord | undefined): boolean {
  return !isPaused(config) || Boolean(failover?.member);
}

export interface PendingRestart {
  pending: boolean;
  reason: Record<string, { old_value: string; new_value: string }>;
}

/**
 * Parameters changed in the configuration files that need a restart, with their running and
 * file values (pg_settings.pending_restart, joined with the last pg_file_settings entry for the
 * new value; that entry carries error "setting could not be applied", so no filter on error).
 */
export const pendingRestartSql = `
SELECT s.name, s.setting AS old_value, COALESCE(f.setting, '') AS new_value, s.unit
  FROM pg_settings s
  LEFT JOIN LATERAL (SELECT fs.setting FROM pg_file_settings fs
                      WHERE fs.name = s.name
                      ORDER BY fs.seqno DESC LIMIT 1) f ON true
 WHERE s.pending_restart
 ORDER BY s.name`;

export interface PendingRestartRow {
  name: string;
  old_value: string;
  new_value: string;
  unit: string | null;
}

export function pendingRestartFrom(rows: PendingRestartRow[]): PendingRestart {
  const reason: PendingRestart['reason'] = {};
  for (const row of rows) reason[row.name] = { old_value: withUnit(row.old_value, row.unit), new_value: row.new_value };
  return { pending: rows.length > 0, reason };
}

function withUnit(value: string, unit: string | null): string {
  // pg_settings shows "32MB" as 4096 with unit 8kB; keep the raw value when the unit is not a plain one.
  return unit && /^[a-zA-Z]+$/.test(unit) ? `${value}${unit}` : value;
}

/** Runs the pending-restart query through any query function (PostgresInstance.query fits). */
export async function readPendingRestart(query: (sql: string) => Promise<PendingRestartRow[]>): Promise<PendingRestart> {
  return pendingRestartFrom(await query(pendingRestartSql));
}
