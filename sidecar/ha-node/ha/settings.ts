import { hbaProblems, sslOn } from '../../../api/postgres/pg-hba.js';
import type { DynamicConfig, MemberTags } from '../dcs/types.js';
import { standbySourceOf, withRepositoryArchive, type StandbySource } from '../postgres/standby-source.js';

/** Timers and failover rules in force: local defaults overlaid by the cluster's dynamic configuration. */
export interface EffectiveConfig {
  ttl: number;
  loop_wait: number;
  retry_timeout: number;
  maximum_lag_on_failover: number;
  check_timeline: boolean;
  primary_start_timeout: number;
  /** Seconds a primary that answered may stay silent before it is fenced and the lock released (0: never). */
  primary_hang_timeout: number;
  failsafe_mode: boolean;
  synchronous_mode: boolean;
  synchronous_mode_strict: boolean;
  synchronous_node_count: number;
  use_slots: boolean;
  use_rewind: boolean;
  parameters: Record<string, string | number | boolean>;
  /** db.pg_hba: client rules written after the ones ha-node needs (empty: the defaults). */
  pg_hba: string[];
  /** Set while this is a standby cluster: the remote source its leader follows (never promotes). */
  standby_cluster?: StandbySource;
  /**
   * restore_command reading the standby's source repository (backup settings with a standby
   * recovery): what `standby_cluster.repository` stands for on this member. Never from the DCS.
   */
  standby_archive_command?: string;
}

export const defaultConfig: EffectiveConfig = {
  ttl: 30,
  loop_wait: 10,
  retry_timeout: 10,
  maximum_lag_on_failover: 1_048_576,
  check_timeline: false,
  primary_start_timeout: 300,
  primary_hang_timeout: 30,
  failsafe_mode: false,
  synchronous_mode: false,
  synchronous_mode_strict: false,
  synchronous_node_count: 1,
  use_slots: true,
  use_rewind: true,
  parameters: {},
  pg_hba: [],
};

/**
 * primary_hang_timeout is 0 (never hand over a hung primary) or 5 to 3600 seconds: shorter would
 * fail over a server that is merely slow to accept one connection.
 */
export const primaryHangTimeoutRange = { min: 5, max: 3600 } as const;

export function validPrimaryHangTimeout(value: unknown): boolean {
  return typeof value === 'number' && (value === 0 || (value >= primaryHangTimeoutRange.min && value <= primaryHangTimeoutRange.max));
}

function numberOr(value: unknown, fallback: number, min: number): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= min ? n : fallback;
}

function booleanOr(value: unknown, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'on' || value === 'true' || value === 'quorum') return true;
  if (value === 'off' || value === 'false') return false;
  return fallback;
}

/**
 * Overlays the dynamic configuration on the base, ignoring values of the wrong type (a bad value
 * in the DCS must not stop the loop), and keeps loop_wait + 2*retry_timeout <= ttl by lowering
 * loop_wait first, as Patroni does.
 */
export function effectiveConfig(base: EffectiveConfig, dynamic: DynamicConfig | undefined): EffectiveConfig {
  const d = dynamic ?? {};
  const config: EffectiveConfig = {
    ttl: numberOr(d.ttl, base.ttl, 2),
    loop_wait: numberOr(d.loop_wait, base.loop_wait, 1),
    retry_timeout: numberOr(d.retry_timeout, base.retry_timeout, 1),
    maximum_lag_on_failover: numberOr(d.maximum_lag_on_failover, base.maximum_lag_on_failover, 0),
    check_timeline: booleanOr(d.check_timeline, base.check_timeline),
    primary_start_timeout: numberOr(d.primary_start_timeout, base.primary_start_timeout, 0),
    primary_hang_timeout: numberOr(d.primary_hang_timeout, base.primary_hang_timeout, 0),
    failsafe_mode: booleanOr(d.failsafe_mode, base.failsafe_mode),
    synchronous_mode: booleanOr(d.synchronous_mode, base.synchronous_mode),
    synchronous_mode_strict: booleanOr(d.synchronous_mode_strict, base.synchronous_mode_strict),
    synchronous_node_count: Math.floor(numberOr(d.synchronous_node_count, base.synchronous_node_count, 1)),
    use_slots: booleanOr(d.db?.use_slots, base.use_slots),
    use_rewind: booleanOr(d.db?.use_rewind, base.use_rewind),
    parameters: { ...base.parameters, ...(d.db?.parameters && typeof d.db.parameters === 'object' ? d.db.parameters : {}) },
    pg_hba: [],
  };
  const standby = standbySourceOf(d.standby_cluster);
  if (standby) config.standby_cluster = withRepositoryArchive(standby, base.standby_archive_command);
  if (base.standby_archive_command !== undefined) config.standby_archive_command = base.standby_archive_command;
  config.pg_hba = validHbaLines(d.db?.pg_hba, config.parameters) ?? base.pg_hba;
  if (config.loop_wait + 2 * config.retry_timeout > config.ttl) {
    config.loop_wait = Math.max(1, config.ttl - 2 * config.retry_timeout);
    if (config.loop_wait + 2 * config.retry_timeout > config.ttl) config.retry_timeout = Math.max(1, Math.floor((config.ttl - config.loop_wait) / 2));
  }
  return config;
}

/**
 * db.pg_hba when it is a list of lines PostgreSQL accepts; otherwise undefined. PATCH /config
 * refuses bad lines, so this only guards against a hand-edited DCS object: one bad line would
 * make PostgreSQL keep its old rules on reload and refuse to start on restart.
 */
export function validHbaLines(value: unknown, parameters: Record<string, unknown>): string[] | undefined {
  if (!Array.isArray(value) || !value.every((line): line is string => typeof line === 'string')) return undefined;
  return hbaProblems(value, { ssl: sslOn(parameters) }).length === 0 ? value : undefined;
}

/** The dynamic configuration a bootstrapping member writes from its local settings. */
export function initialDynamicConfig(config: EffectiveConfig): DynamicConfig {
  return {
    ttl: config.ttl,
    loop_wait: config.loop_wait,
    retry_timeout: config.retry_timeout,
    maximum_lag_on_failover: config.maximum_lag_on_failover,
    check_timeline: config.check_timeline,
    primary_start_timeout: config.primary_start_timeout,
    primary_hang_timeout: config.primary_hang_timeout,
    failsafe_mode: config.failsafe_mode,
    synchronous_mode: config.synchronous_mode,
    db: { use_slots: config.use_slots, use_rewind: config.use_rewind, parameters: config.parameters },
  };
}

/**
 * What a bootstrapping member writes to the DCS: its local settings overlaid by the bootstrap
 * document (the `db` section merged key by key), so a new cluster starts with the values its
 * owner asked for instead of defaults that a later PATCH /config would have to restart away.
 */
export function seedDynamicConfig(config: EffectiveConfig, bootstrap: DynamicConfig = {}): DynamicConfig {
  const initial = initialDynamicConfig(config);
  return { ...initial, ...bootstrap, db: { ...initial.db, ...bootstrap.db } };
}

export function isTrue(value: unknown): boolean {
  return value === true || value === 'true' || value === 'True' || value === 'on';
}

export function noFailover(tags: MemberTags): boolean {
  return isTrue(tags.nofailover);
}
