import { dynamicConfigPatchSchema } from '../../../api/ha-node/dynamic-config.js';
import { checkBound, haCountBounds, haTimingBounds, type Bound } from '../../../api/crd/ha-bounds.js';
import { primaryHangTimeoutRange, validPrimaryHangTimeout } from '../ha/settings.js';
import { isPlainObject, type JsonObject } from './config-merge.js';
import type { ConfigProblem } from './config-problem.js';
import { hbaConfigProblems } from './hba-validate.js';
import { parameterNameProblem, parameterValueProblem } from '../../../api/postgres/pg-parameters.js';
import type { ParameterValue } from '../postgres/conf.js';
import { standbySourceProblems } from '../postgres/standby-source.js';
import { managedRolesCheck } from '../managed/roles-check.js';

/**
 * Validation of a complete dynamic configuration document before it is written to the DCS.
 * Patroni stores anything and then every member logs ValueError on each loop; we refuse with a
 * 400 that names the field instead. Every check returns all problems, first one first. Timings
 * and counts have the bounds of the DatabaseCluster CRD (api/crd/ha-bounds.ts).
 */
type Check = (value: unknown) => string | undefined;

const bounded =
  (bound: Bound): Check =>
  (v) =>
    checkBound(v, bound);
const boolean: Check = (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
const synchronousMode: Check = (v) =>
  typeof v === 'boolean' || v === 'on' || v === 'off' || v === 'quorum' ? undefined : 'must be true, false, "on", "off" or "quorum"';
const durationUnits: Record<string, number> = { '': 1, s: 1, min: 60, h: 3600, d: 86400 };
/** Seconds, or a duration such as "30min"; bounded like a number of seconds. */
const durationOrSeconds =
  (bound: Bound): Check =>
  (v) => {
    const match = typeof v === 'string' ? /^(\d+)\s*(s|min|h|d)?$/.exec(v) : null;
    const seconds = match ? Number(match[1]) * durationUnits[match[2] ?? '']! : v;
    if (typeof v !== 'number' && !match) return 'must be seconds or a duration such as "30min"';
    return checkBound(seconds, bound) ? `must be from ${bound.min} to ${bound.max} seconds` : undefined;
  };
const anyObject: Check = (v) => (isPlainObject(v) ? undefined : 'must be an object');

/** Top-level keys we know, with their checks. `db` is checked separately. */
const topLevel: Record<string, Check> = {
  ttl: bounded(haTimingBounds.ttl),
  loop_wait: bounded(haTimingBounds.loop_wait),
  retry_timeout: bounded(haTimingBounds.retry_timeout),
  maximum_lag_on_failover: bounded(haCountBounds.maximum_lag_on_failover),
  maximum_lag_on_syncnode: bounded(haCountBounds.maximum_lag_on_syncnode),
  check_timeline: boolean,
  primary_start_timeout: bounded(haTimingBounds.primary_start_timeout),
  primary_hang_timeout: (v) =>
    validPrimaryHangTimeout(v) ? undefined : `must be 0 (never) or ${primaryHangTimeoutRange.min} to ${primaryHangTimeoutRange.max} seconds`,
  primary_stop_timeout: bounded(haTimingBounds.primary_stop_timeout),
  primary_race_backoff: bounded(haTimingBounds.primary_race_backoff),
  failsafe_mode: boolean,
  pause: boolean,
  synchronous_mode: synchronousMode,
  synchronous_mode_strict: boolean,
  synchronous_node_count: bounded(haCountBounds.synchronous_node_count),
  member_slots_ttl: durationOrSeconds(haTimingBounds.member_slots_ttl),
  max_timelines_history: bounded(haCountBounds.max_timelines_history),
  slots: anyObject,
  ignore_slots: (v) => (Array.isArray(v) ? undefined : 'must be an array'),
  // Checked key by key in standbySourceProblems (the entry keeps it in knownConfigKeys).
  standby_cluster: anyObject,
  roles: managedRolesCheck,
};

const dbKeys: Record<string, Check> = {
  use_slots: boolean,
  use_rewind: boolean,
  use_pg_rewind: boolean,
  parameters: anyObject,
  pg_hba: (v) => (Array.isArray(v) && v.every((line) => typeof line === 'string') ? undefined : 'must be an array of strings'),
};

/** Parameters ha-node owns; letting the dynamic configuration change them would break replication. */

export function knownConfigKeys(): string[] {
  return [...Object.keys(topLevel), 'db'];
}

/** What the validating member knows of itself. */
export interface ValidationContext {
  /** It serves PostgreSQL over TLS and requires TLS of every remote session (pg_hba hostnossl rejects). */
  requireTls?: boolean;
}

/**
 * Checks a complete document. `patch` (the keys the caller sent) decides which timer the
 * invariant error names, so the message points at what the caller changed, and whether pg_hba
 * lines are held to the TLS policy (only lines the request sends: stored ones must not block every PATCH).
 */
export function validateDynamicConfig(config: JsonObject, patch: JsonObject = config, member: ValidationContext = {}): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (key === 'db') {
      problems.push(...validateDb(value, patch, member));
      continue;
    }
    if (key === 'standby_cluster') {
      problems.push(...standbySourceProblems(value));
      continue;
    }
    const check = Object.hasOwn(topLevel, key) ? topLevel[key] : undefined;
    if (!check) {
      problems.push({ field: key, message: 'is not a known configuration key' });
      continue;
    }
    const message = check(value);
    if (message) problems.push({ field: key, message: `${message} (got ${JSON.stringify(value)})` });
  }
  if (problems.length === 0) problems.push(...checkInvariants(config, patch));
  if (problems.length === 0) problems.push(...contractProblems(patch));
  return problems;
}

/**
 * What was sent, against the contract's schema (api/ha-node/dynamic-config.ts) that the operator
 * builds its documents with. After the checks above it finds nothing new unless the two drift apart.
 */
function contractProblems(patch: JsonObject): ConfigProblem[] {
  const parsed = dynamicConfigPatchSchema.safeParse(patch);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({ field: issue.path.map(String).join('.') || '(root)', message: issue.message }));
}

function validateDb(value: unknown, patch: JsonObject, member: ValidationContext): ConfigProblem[] {
  if (!isPlainObject(value)) return [{ field: 'db', message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const check = Object.hasOwn(dbKeys, key) ? dbKeys[key] : undefined;
    if (!check) {
      problems.push({ field: `db.${key}`, message: 'is not a known configuration key' });
      continue;
    }
    const message = check(inner);
    if (message) problems.push({ field: `db.${key}`, message: `${message} (got ${JSON.stringify(inner)})` });
    else if (key === 'parameters') problems.push(...validateParameters(inner as JsonObject, parametersOf(isPlainObject(patch.db) ? { db: patch.db } : {})));
    else if (key === 'pg_hba') {
      const sent = isPlainObject(patch.db) && Object.hasOwn(patch.db, 'pg_hba');
      problems.push(...hbaConfigProblems(inner as string[], value.parameters, sent && member.requireTls === true));
    }
  }
  return problems;
}

/** Names are checked everywhere; values only where the request sets them (a stored bad value must not block every PATCH). */
function validateParameters(parameters: JsonObject, sent: JsonObject): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    const field = `db.parameters.${name}`;
    const nameProblem = parameterNameProblem(name);
    if (nameProblem) problems.push({ field, message: nameProblem });
    else if (Object.hasOwn(sent, name)) {
      const valueProblem = parameterValueProblem(value);
      if (valueProblem) problems.push({ field, message: valueProblem });
    }
  }
  return problems;
}

/** The db.parameters of `next` that are new or differ from `stored` (values already validated as scalars). */
export function changedParameters(stored: JsonObject, next: JsonObject): Record<string, ParameterValue> {
  const before = parametersOf(stored);
  const changed: Record<string, ParameterValue> = {};
  for (const [name, value] of Object.entries(parametersOf(next))) {
    if (!Object.hasOwn(before, name) || before[name] !== value) changed[name] = value as ParameterValue;
  }
  return changed;
}

function parametersOf(config: JsonObject): JsonObject {
  const db = config.db;
  return isPlainObject(db) && isPlainObject(db.parameters) ? db.parameters : {};
}

/** Timer invariants, checked with the values in force (missing keys take the defaults). */
function checkInvariants(config: JsonObject, patch: JsonObject): ConfigProblem[] {
  const ttl = numberOr(config.ttl, 30);
  const loopWait = numberOr(config.loop_wait, 10);
  const retryTimeout = numberOr(config.retry_timeout, 10);
  if (loopWait + 2 * retryTimeout > ttl) {
    // Name the key the caller changed, in Patroni's lowering order (loop_wait, retry_timeout, ttl).
    const order = ['loop_wait', 'retry_timeout', 'ttl'] as const;
    const field = order.find((k) => k in patch) ?? order.find((k) => config[k] !== undefined) ?? 'ttl';
    return [{ field, message: `violates loop_wait + 2*retry_timeout <= ttl (${loopWait} + 2*${retryTimeout} > ${ttl})` }];
  }
  return [];
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

/** The 400 body: one line per problem, each starting with the field name. */
export function describeProblems(problems: ConfigProblem[]): string {
  return problems.map((p) => `invalid configuration: "${p.field}" ${p.message}`).join('\n');
}
