/**
 * Five-field cron schedules (minute hour day-of-month month day-of-week, UTC): a pattern the API
 * server checks at apply time, a parser, and the latest due time before a moment, which the
 * operator's backup schedule compares with the last run. Day-of-month and day-of-week combine
 * as in Vixie cron: when both are restricted, either matching is enough.
 */

interface FieldSpec {
  min: number;
  max: number;
  /** A regular-expression alternative for one number of the field (bounds the API server can check). */
  number: string;
}

const fields: FieldSpec[] = [
  { min: 0, max: 59, number: '[0-5]?[0-9]' },
  { min: 0, max: 23, number: '[01]?[0-9]|2[0-3]' },
  { min: 1, max: 31, number: '0?[1-9]|[12][0-9]|3[01]' },
  { min: 1, max: 12, number: '0?[1-9]|1[0-2]' },
  { min: 0, max: 7, number: '[0-7]' },
];

function fieldPattern(spec: FieldSpec): string {
  const n = `(${spec.number})`;
  const item = `(\\*|${n}(-${n})?)(/[1-9][0-9]?)?`;
  return `${item}(,${item})*`;
}

/** The whole schedule as one anchored regular expression (for the CRD's pattern). */
export const cronPattern = `^${fields.map(fieldPattern).join(' ')}$`;

export interface CronSchedule {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  daysRestricted: boolean;
  weekdaysRestricted: boolean;
}

function parseField(text: string, spec: FieldSpec, index: number): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [spec.min, spec.max];
    else {
      const [a, b] = range.split('-').map(Number) as [number, number | undefined];
      from = a;
      to = b ?? (stepText === undefined ? a : spec.max);
    }
    if (!Number.isInteger(from) || !Number.isInteger(to) || !Number.isInteger(step) || step < 1 || from < spec.min || to > spec.max || from > to) {
      throw new Error(`cron field ${index + 1} ("${text}") is out of range ${spec.min}-${spec.max}`);
    }
    for (let v = from; v <= to; v += step) values.add(index === 4 && v === 7 ? 0 : v);
  }
  return values;
}

export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || !new RegExp(cronPattern).test(parts.join(' ')))
    throw new Error(`"${expression}" is not a five-field cron schedule (minute hour day month weekday)`);
  const [m, h, dom, mon, dow] = parts.map((p, i) => parseField(p, fields[i]!, i)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  return { minutes: m, hours: h, days: dom, months: mon, weekdays: dow, daysRestricted: parts[2] !== '*', weekdaysRestricted: parts[4] !== '*' };
}

function matchesDay(schedule: CronSchedule, date: Date): boolean {
  const day = schedule.days.has(date.getUTCDate());
  const weekday = schedule.weekdays.has(date.getUTCDay());
  if (schedule.daysRestricted && schedule.weekdaysRestricted) return day || weekday;
  return day && weekday;
}

/** The latest minute at or before `at` the schedule fires (UTC); undefined when none within 366 days. */
export function lastDue(schedule: CronSchedule, at: Date): Date | undefined {
  const t = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  const limit = at.getTime() - 366 * 86_400_000;
  while (t.getTime() >= limit) {
    if (!schedule.months.has(t.getUTCMonth() + 1) || !matchesDay(schedule, t)) {
      // Jump to the last minute of the previous day.
      t.setUTCHours(0, 0, 0, 0);
      t.setTime(t.getTime() - 60_000);
      continue;
    }
    if (!schedule.hours.has(t.getUTCHours())) {
      t.setUTCMinutes(0, 0, 0);
      t.setTime(t.getTime() - 60_000);
      continue;
    }
    if (schedule.minutes.has(t.getUTCMinutes())) return t;
    t.setTime(t.getTime() - 60_000);
  }
  return undefined;
}
