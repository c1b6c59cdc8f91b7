import { readFileSync } from 'node:fs';
import type { ParameterValue } from './conf.js';
import { settingValueProblem, type SettingRule } from './setting-rules.js';

/**
 * The running server's pg_settings, kept to check parameter values before they reach
 * postgresql.conf: PATCH /config refuses what the server would refuse, and the member never
 * writes such a value even when one reaches the DCS another way.
 */
export type SettingsCatalog = ReadonlyMap<string, SettingRule>;

export const settingsCatalogSql = 'SELECT name, vartype, context, unit, min_val, max_val, enumvals FROM pg_settings';

/** Values that pg_file_settings marks as errors: what the last reload could not apply. */
export const fileSettingErrorsSql = 'SELECT name, error FROM pg_file_settings WHERE error IS NOT NULL ORDER BY seqno';

export function catalogFrom(rows: readonly SettingRule[]): SettingsCatalog {
  return new Map(rows.map((row) => [row.name.toLowerCase(), row]));
}

/**
 * The catalog as last saved beside the data directory: a member whose server is down when
 * ha-node starts (a pod restart) screens with it instead of writing a value the server will
 * refuse to start with. Undefined when there is none or it cannot be read.
 */
export function loadCatalog(file: string): SettingsCatalog | undefined {
  try {
    const rows = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(rows) && rows.length > 0 ? catalogFrom(rows as SettingRule[]) : undefined;
  } catch {
    return undefined;
  }
}

export function catalogText(catalog: SettingsCatalog): string {
  return JSON.stringify([...catalog.values()]);
}

export interface RejectedParameter {
  name: string;
  value: ParameterValue;
  reason: string;
}

/** A problem named as PATCH /config and the member status show it. */
export function rejectionText(rejected: RejectedParameter): string {
  return `${rejected.name} = ${JSON.stringify(rejected.value)} ${rejected.reason}`;
}

export interface ScreenedParameters {
  /** What may be written: accepted values, and for a refused one its last good value (if any). */
  parameters: Record<string, ParameterValue>;
  rejected: RejectedParameter[];
}

/**
 * Splits the wanted parameters into those the server accepts and those it would refuse. A
 * refused parameter keeps the value last written (`lastGood`), so one bad value neither blocks the
 * other changes nor falls back to a default. Without a catalog only the server-independent
 * checks apply (control characters, numbers with an exponent).
 */
export function screenParameters(
  wanted: Record<string, ParameterValue>,
  lastGood: Record<string, ParameterValue>,
  catalog: SettingsCatalog | undefined,
): ScreenedParameters {
  const parameters: Record<string, ParameterValue> = {};
  const rejected: RejectedParameter[] = [];
  for (const [name, value] of Object.entries(wanted)) {
    const reason = valueProblem(name, value, catalog);
    if (!reason) {
      parameters[name] = value;
      continue;
    }
    rejected.push({ name, value, reason });
    const previous = Object.hasOwn(lastGood, name) ? lastGood[name] : undefined;
    if (previous !== undefined && !valueProblem(name, previous, catalog)) parameters[name] = previous;
  }
  return { parameters, rejected };
}

function valueProblem(name: string, value: ParameterValue, catalog: SettingsCatalog | undefined): string | undefined {
  if (!catalog) return settingValueProblem(name, value, { name, vartype: 'string', context: 'user', unit: null, min_val: null, max_val: null, enumvals: null });
  return settingValueProblem(name, value, catalog.get(name.toLowerCase()));
}
