import { Ports } from '../../../lib/ports.js';
import type { ParameterValue } from './conf.js';

/**
 * The remote source a standby cluster follows: the dynamic configuration's `standby_cluster`
 * (Patroni's keys). Pure parsing, validation and the recovery settings it turns into; the HA
 * loop's standby duty (ha/standby-duties.ts) decides when they apply.
 */
export interface StandbySource {
  host?: string;
  port?: number;
  primary_slot_name?: string;
  restore_command?: string;
  archive_cleanup_command?: string;
  /** Milliseconds, or a PostgreSQL duration such as "5min". */
  recovery_min_apply_delay?: number | string;
  /**
   * Keelson's own key: follow the WAL archive of the backup repository this member's backup
   * settings name as the standby's source (each member fills in its own restore_command for it).
   */
  repository?: boolean;
  /**
   * Keelson's own key: the name the source's server certificate carries. With it and the source's
   * TLS files (sourceTlsDir), the source is reached with verify-full by this name while `host` is
   * the address dialled, presenting the source's replication client certificate (peer-tls.ts).
   */
  server_name?: string;
}

export interface StandbyProblem {
  /** Dotted path, e.g. "standby_cluster.port". */
  field: string;
  message: string;
}

const hostPattern = /^[A-Za-z0-9]([A-Za-z0-9._:-]{0,252})$/;
const serverNamePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const slotPattern = /^[a-z0-9_]{1,63}$/;
const durationPattern = /^\d{1,9}\s*(ms|s|min|h|d)?$/;
/** A command ends up quoted in postgresql.conf: a line break or NUL would end the value early. */
const hasControlCharacter = (text: string): boolean => [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

type Check = (value: unknown) => string | undefined;

const command: Check = (v) =>
  typeof v !== 'string' || v.length === 0 || v.length > 4096
    ? 'must be a non-empty string of at most 4096 characters'
    : hasControlCharacter(v)
      ? 'must not contain control characters such as line breaks'
      : undefined;

const checks: Record<keyof StandbySource, Check> = {
  host: (v) => (typeof v === 'string' && hostPattern.test(v) ? undefined : 'must be a host name or IP address'),
  port: (v) => (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535 ? undefined : 'must be an integer from 1 to 65535'),
  primary_slot_name: (v) => (typeof v === 'string' && slotPattern.test(v) ? undefined : 'must be 1 to 63 lower-case letters, digits or underscores'),
  restore_command: command,
  archive_cleanup_command: command,
  recovery_min_apply_delay: (v) =>
    (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 2_147_483_647) || (typeof v === 'string' && durationPattern.test(v))
      ? undefined
      : 'must be milliseconds (0 to 2147483647) or a duration such as "5min"',
  repository: (v) => (typeof v === 'boolean' ? undefined : 'must be true or false'),
  server_name: (v) => (typeof v === 'string' && v.length <= 253 && serverNamePattern.test(v) ? undefined : 'must be a DNS name'),
};

/** Every problem of a `standby_cluster` value (empty: valid). A source needs host or restore_command. */
export function standbySourceProblems(value: unknown): StandbyProblem[] {
  const field = 'standby_cluster';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [{ field, message: `must be an object (got ${JSON.stringify(value)})` }];
  const problems: StandbyProblem[] = [];
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const check = Object.hasOwn(checks, key) ? checks[key as keyof StandbySource] : undefined;
    const message = check ? check(inner) : 'is not a known configuration key';
    if (message) problems.push({ field: `${field}.${key}`, message: check ? `${message} (got ${JSON.stringify(inner)})` : message });
  }
  const source = value as StandbySource;
  if (problems.length === 0 && source.host === undefined && source.restore_command === undefined && source.repository !== true) {
    problems.push({ field, message: 'needs host (streaming), restore_command or repository (WAL archive), or both' });
  }
  return problems;
}

/** The source when `value` is a valid one; undefined otherwise (a hand-edited DCS object must not stop the loop). */
export function standbySourceOf(value: unknown): StandbySource | undefined {
  if (value === undefined || value === null || standbySourceProblems(value).length > 0) return undefined;
  return { ...(value as StandbySource) };
}

/**
 * The source with the repository's archive as its restore_command when it follows the backup
 * repository (`repository: true`) and names no command of its own; pure.
 */
export function withRepositoryArchive(source: StandbySource, archiveCommand: string | undefined): StandbySource {
  if (source.repository !== true || source.restore_command !== undefined || archiveCommand === undefined) return source;
  return { ...source, restore_command: archiveCommand };
}

/** Where the standby leader streams from (port defaults to PostgreSQL's). */
export function sourcePort(source: StandbySource): number {
  return source.port ?? Ports.postgres;
}

/** Recovery settings besides primary_conninfo/primary_slot_name that the standby leader runs with. */
export function standbySourceSettings(source: StandbySource): Record<string, ParameterValue> {
  const settings: Record<string, ParameterValue> = {};
  if (source.restore_command !== undefined) settings.restore_command = source.restore_command;
  if (source.archive_cleanup_command !== undefined) settings.archive_cleanup_command = source.archive_cleanup_command;
  if (source.recovery_min_apply_delay !== undefined) settings.recovery_min_apply_delay = source.recovery_min_apply_delay;
  return settings;
}

/** Whether two sources would give the standby leader the same recovery settings. */
export function sameSource(a: StandbySource | undefined, b: StandbySource | undefined): boolean {
  const canonical = (s: StandbySource | undefined): string => (s ? JSON.stringify(Object.entries(s).sort(([x], [y]) => x.localeCompare(y))) : '');
  return canonical(a) === canonical(b);
}
