import { haTimingBounds } from '../../../api/crd/ha-bounds.js';
import { isPlainObject } from './config-merge.js';
import { parseSchedule, restartScheduleTexts } from './schedule.js';
import { reply, type Reply } from './texts.js';

export type RestartRole = 'primary' | 'standby_leader' | 'replica';

/** A validated POST /restart body; every condition is optional. */
export interface RestartRequest {
  restartPending?: boolean;
  role?: RestartRole;
  /** Restart only if the running server_version_num is lower than this. */
  dbVersion?: number;
  /** Seconds to wait for the server to accept connections. */
  timeout?: number;
  schedule?: { at: Date; iso: string };
}

export type ParsedRestart = { ok: true; request: RestartRequest } | { ok: false; reply: Reply };

const restartTimeoutMax = haTimingBounds.primary_start_timeout.max;
const knownKeys = new Set(['restart_pending', 'role', 'db_version', 'postgres_version', 'timeout', 'schedule']);

/** Body checks of POST /restart with Patroni's texts; an absent or empty body means "restart now". */
export function parseRestartRequest(body: unknown, paused: boolean, now: Date): ParsedRestart {
  if (body === undefined || body === null) return { ok: true, request: {} };
  if (!isPlainObject(body)) return fail(400, 'Bad request: the body must be a JSON object');
  const request: RestartRequest = {};
  for (const [key, value] of Object.entries(body)) {
    if (!knownKeys.has(key)) return fail(400, `Unknown filter for the scheduled restart: ${key}`);
    if (value === null || value === undefined) continue;
    if (key === 'restart_pending') {
      const flag = booleanOf(value);
      if (flag === undefined) return fail(400, 'restart_pending should be a boolean');
      request.restartPending = flag;
    } else if (key === 'role') {
      const role = value === 'master' ? 'primary' : value;
      if (role !== 'primary' && role !== 'standby_leader' && role !== 'replica')
        return fail(400, 'PostgreSQL role should be either primary, standby_leader, or replica');
      request.role = role;
    } else if (key === 'db_version' || key === 'postgres_version') {
      const version = parseServerVersion(value);
      if (version === undefined) return fail(400, `Invalid PostgreSQL version: ${String(value)}`);
      request.dbVersion = version;
    } else if (key === 'timeout') {
      const seconds = parseSeconds(value);
      if (seconds === undefined) return fail(400, 'Timeout should be a positive number of seconds');
      // It becomes pg_ctl's -t and a Node.js timer, which fires at once beyond 2^31 ms.
      if (seconds > restartTimeoutMax) return fail(400, `Timeout should be at most ${restartTimeoutMax} seconds`);
      request.timeout = seconds;
    } else if (key === 'schedule') {
      if (paused) return fail(400, "Can't schedule restart in the paused state");
      const parsed = parseSchedule(value, now, restartScheduleTexts);
      if (!parsed.ok) return fail(parsed.code, parsed.message);
      request.schedule = { at: parsed.at, iso: parsed.iso };
    }
  }
  return { ok: true, request };
}

function booleanOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return undefined;
}

/** "15" → 150000, "15.4" → 150004, "9.6.3" → 90603, "150004" → 150004 (server_version_num). */
export function parseServerVersion(value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (/^\d{5,6}$/.test(text)) return Number(text);
  const match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const [major, minor = '0', patch = '0'] = match.slice(1).map((p) => p ?? '0') as [string, string, string];
  const majorNumber = Number(major);
  if (majorNumber >= 10) return majorNumber * 10000 + Number(minor);
  return majorNumber * 10000 + Number(minor) * 100 + Number(patch);
}

/** Seconds as a positive number, or a string such as "30", "30s", "2min". */
export function parseSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(s|sec|min|h)?$/.exec(value.trim());
  if (!match) return undefined;
  const n = Number(match[1]) * ({ s: 1, sec: 1, min: 60, h: 3600 }[match[2] ?? 's'] ?? 1);
  return n > 0 ? n : undefined;
}

/** What the node knows about itself when a restart is decided. */
export interface RestartFacts {
  role: RestartRole | 'unknown';
  serverVersion?: number;
  pendingRestart: boolean;
}

/** Patroni's restart_matches: every given condition must hold. */
export function restartConditionsMet(request: RestartRequest, facts: RestartFacts): boolean {
  if (request.restartPending && !facts.pendingRestart) return false;
  if (request.role && request.role !== facts.role) return false;
  if (request.dbVersion !== undefined && (facts.serverVersion === undefined || facts.serverVersion >= request.dbVersion)) return false;
  return true;
}

export const restartTexts = {
  done: 'restarted successfully',
  notSatisfied: 'restart conditions are not satisfied',
  failed: 'restart failed',
  scheduled: 'Restart scheduled',
  alreadyScheduled: 'Another restart is already scheduled',
  deleted: 'scheduled restart deleted',
  noneScheduled: 'no restarts are scheduled',
} as const;

function fail(code: number, text: string): ParsedRestart {
  return { ok: false, reply: reply(code, text) };
}
