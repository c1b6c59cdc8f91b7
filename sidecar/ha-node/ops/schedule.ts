/**
 * ISO 8601 timestamps for scheduled switchovers and restarts. A timezone (Z or ±hh:mm) is
 * mandatory: a bare local time is ambiguous between the client, the pod and the API server.
 */
export type ScheduleResult = { ok: true; at: Date; iso: string } | { ok: false; code: 400 | 422; message: string };

const isoPattern = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

export interface ScheduleTexts {
  timezone: string;
  past: string;
  unparseable: string;
}

export const switchoverScheduleTexts: ScheduleTexts = {
  timezone: 'Timezone information is mandatory for the scheduled switchover',
  past: 'Cannot schedule switchover in the past',
  unparseable: 'Unable to parse scheduled timestamp. It should be in an unambiguous format, e.g. ISO 8601',
};

export const restartScheduleTexts: ScheduleTexts = {
  timezone: 'Timezone information is mandatory for the scheduled restart',
  past: 'Cannot schedule restart in the past',
  unparseable: 'Unable to parse scheduled timestamp. It should be in an unambiguous format, e.g. ISO 8601',
};

/** Parses a schedule; a time less than a second in the past counts as "now" (clock skew of the caller). */
export function parseSchedule(value: unknown, now: Date, texts: ScheduleTexts = switchoverScheduleTexts): ScheduleResult {
  if (typeof value !== 'string') return { ok: false, code: 422, message: texts.unparseable };
  const match = isoPattern.exec(value.trim());
  if (!match) return { ok: false, code: 422, message: texts.unparseable };
  const [, year, month, day, hour, minute, second = '00', fraction = '', zone] = match;
  if (!zone) return { ok: false, code: 400, message: texts.timezone };
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : normaliseOffset(zone);
  const text = `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${offset}`;
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || !fieldsInRange(Number(month), Number(day), Number(hour), Number(minute), Number(second))) {
    return { ok: false, code: 422, message: texts.unparseable };
  }
  if (at.getTime() < now.getTime() - 1000) return { ok: false, code: 422, message: texts.past };
  return { ok: true, at, iso: formatWithOffset(at) };
}

function normaliseOffset(zone: string): string {
  const digits = zone.slice(1).replace(':', '');
  return `${zone[0]}${digits.slice(0, 2)}:${(digits.slice(2) || '00').padEnd(2, '0')}`;
}

function fieldsInRange(month: number, day: number, hour: number, minute: number, second: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 60;
}

/**
 * "2026-11-22T11:07:52+00:00", the form Patroni shows in /cluster; milliseconds stay when there
 * are any, so the stored time is never earlier than the requested one (a switchover or restart
 * must not run before its time).
 */
export function formatWithOffset(at: Date): string {
  return at
    .toISOString()
    .replace(/\.000Z$/, 'Z')
    .replace(/Z$/, '+00:00');
}
