import { parameterValueProblem } from '../../../api/postgres/pg-parameters.js';
import type { ParameterValue } from './conf.js';

/**
 * PostgreSQL's own rules for a parameter value (guc.c: parse_bool, parse_int, parse_real, the
 * enum lookup and the unit conversion), applied to a row of the running server's pg_settings.
 * Pure: the caller reads the rows (settings-catalog.ts). A value these rules accept is one the
 * server loads; one they refuse would make a reload keep the old value and a restart fail.
 */
export interface SettingRule {
  name: string;
  vartype: 'bool' | 'integer' | 'real' | 'string' | 'enum';
  context: string;
  /** The base unit of an integer or real setting ('8kB', 'kB', 'MB', 'B', 'ms', 's', 'min'), or null. */
  unit: string | null;
  min_val: string | null;
  max_val: string | null;
  enumvals: string[] | null;
}

const kB = 1024;
/** Bytes of each memory unit PostgreSQL accepts (case-sensitive, as the server compares them). */
const memoryUnits: Record<string, number> = { B: 1, kB, MB: kB ** 2, GB: kB ** 3, TB: kB ** 4 };
/** Milliseconds of each time unit. */
const timeUnits: Record<string, number> = { us: 0.001, ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** What a base unit of pg_settings.unit is worth, and in which family ("8kB" is 8192 bytes). */
function baseUnit(unit: string): { family: Record<string, number>; size: number } | undefined {
  const match = /^(\d*)\s*(B|kB|MB|GB|TB|us|ms|s|min|h|d)$/.exec(unit);
  if (!match) return undefined;
  const family = match[2]! in memoryUnits ? memoryUnits : timeUnits;
  return { family, size: Number(match[1] || '1') * family[match[2]!]! };
}

/** Units of a family, smallest first (a fraction is rounded to the next smaller one, as the server does). */
function unitsAscending(family: Record<string, number>): [string, number][] {
  return Object.entries(family).sort((a, b) => a[1] - b[1]);
}

/** Converts "<number><unit>" to the setting's base unit, or explains why not. */
function toBaseUnit(value: number, unitText: string, rule: SettingRule): number | string {
  const unit = unitText.replace(/\s+$/, '');
  const base = rule.unit ? baseUnit(rule.unit) : undefined;
  if (!base) return 'takes no unit';
  const units = unitsAscending(base.family);
  const index = units.findIndex(([name]) => name === unit);
  if (index < 0) return `has an invalid unit "${unitText}" (valid units: ${units.map(([name]) => name).join(', ')})`;
  let bytesOrMs = value * units[index]![1];
  const smaller = units[index - 1];
  if (smaller) bytesOrMs = Math.round(bytesOrMs / smaller[1]) * smaller[1];
  return bytesOrMs / base.size;
}

/** strtol with base 0 (decimal, 0x hex, leading-zero octal), then strtod when a '.' or exponent follows. */
function leadingNumber(text: string, integer: boolean): { value: number; rest: string } | undefined {
  const trimmed = text.replace(/^\s+/, '');
  if (integer) {
    const int = /^([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)/.exec(trimmed);
    const next = int ? trimmed[int[0].length] : undefined;
    if (int && next !== '.' && next !== 'e' && next !== 'E') {
      const digits = int[2]!;
      const magnitude = /^0[xX]/.test(digits)
        ? parseInt(digits.slice(2), 16)
        : digits.length > 1 && digits.startsWith('0')
          ? parseInt(digits, 8)
          : Number(digits);
      return { value: int[1] === '-' ? -magnitude : magnitude, rest: trimmed.slice(int[0].length) };
    }
  }
  const real = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(trimmed) ?? /^[+-]?inf(inity)?/i.exec(trimmed);
  if (!real) return undefined;
  return { value: Number(real[0].replace(/inf(inity)?/i, 'Infinity')), rest: trimmed.slice(real[0].length) };
}

function rangeText(rule: SettingRule): string {
  return `${rule.min_val} .. ${rule.max_val}${rule.unit ? ` ${rule.unit}` : ''}`;
}

function numericProblem(text: string, rule: SettingRule): string | undefined {
  const integer = rule.vartype === 'integer';
  const parsed = leadingNumber(text, integer);
  if (!parsed || Number.isNaN(parsed.value))
    return `is not ${integer ? 'an integer' : 'a number'}${rule.unit ? ` or a ${integer ? 'size' : 'value'} with a unit such as ${exampleFor(rule.unit)}` : ''}`;
  let value = parsed.value;
  const unitText = parsed.rest.replace(/^\s+/, '');
  if (unitText !== '') {
    const converted = toBaseUnit(value, unitText, rule);
    if (typeof converted === 'string') return converted;
    value = converted;
  }
  if (integer) {
    value = Math.round(value);
    if (!(value >= -(2 ** 31) && value < 2 ** 31)) return 'exceeds the integer range';
  }
  const min = Number(rule.min_val);
  const max = Number(rule.max_val);
  if (!Number.isFinite(value) || value < min || value > max) return `is outside the valid range ${rangeText(rule)}`;
  return undefined;
}

function exampleFor(unit: string): string {
  return baseUnit(unit)?.family === timeUnits ? '"5min"' : '"64MB"';
}

/** parse_bool: a prefix of true/false/yes/no, on/off with two letters at least, 1 or 0; any case. */
export function isPostgresBool(text: string): boolean {
  const value = text.toLowerCase();
  if (value === '') return false;
  if (value === '1' || value === '0') return true;
  if (['true', 'false', 'yes', 'no'].some((word) => word.startsWith(value))) return true;
  return value.length >= 2 && (value === 'on' || 'off'.startsWith(value));
}

/** Spellings an enum accepts without listing them in enumvals (guc_tables.c hides them). */
function hiddenEnumValues(rule: SettingRule): string[] {
  const values = rule.enumvals ?? [];
  const hidden = values.includes('on') && values.includes('off') ? ['true', 'false', 'yes', 'no', '1', '0'] : [];
  if (rule.name === 'wal_level') hidden.push('archive', 'hot_standby');
  return hidden;
}

function enumProblem(text: string, rule: SettingRule): string | undefined {
  const wanted = text.toLowerCase();
  const accepted = [...(rule.enumvals ?? []), ...hiddenEnumValues(rule)];
  return accepted.some((v) => v.toLowerCase() === wanted) ? undefined : `must be one of ${(rule.enumvals ?? []).join(', ')}`;
}

/** The value as the configuration file gives it to the server. */
function asServerText(value: ParameterValue): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return String(value);
}

/**
 * Why the server would refuse `value` for the setting described by `rule`, or undefined.
 * `rule` undefined means the server has no such setting: only a customized option (with a dot,
 * an extension's placeholder) is then accepted.
 */
export function settingValueProblem(name: string, value: ParameterValue, rule: SettingRule | undefined): string | undefined {
  const staticProblem = parameterValueProblem(value);
  if (staticProblem) return staticProblem;
  if (!rule) return name.includes('.') ? undefined : 'is not a parameter this PostgreSQL server knows';
  if (rule.context === 'internal') return 'is fixed when PostgreSQL is built or initialized and cannot be set';
  const text = asServerText(value);
  switch (rule.vartype) {
    case 'bool':
      return isPostgresBool(text) ? undefined : 'must be a boolean (on, off, true, false, yes, no, 1, 0)';
    case 'integer':
    case 'real':
      return numericProblem(text, rule);
    case 'enum':
      return enumProblem(text, rule);
    default:
      return undefined;
  }
}
