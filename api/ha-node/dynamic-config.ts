import { z } from 'zod';
import { managedRolesListSchema } from '../crd/managed-roles.js';

/**
 * The dynamic configuration (Patroni's key names; the database section is `db`): what the operator
 * seeds as the settings document's bootstrapConfig and changes later with PATCH /config, and what
 * ha-node keeps in the DCS. One schema at both ends: the operator builds its input type, ha-node
 * checks every document and patch it accepts against it — after its own checks
 * (sidecar/ha-node/ops/config-validate.ts), which hold the bounds, PostgreSQL's rules for parameters
 * and pg_hba lines, and the field-naming 400 messages.
 */

const parameterValue = z.union([z.string(), z.number(), z.boolean()]);

/**
 * The WAL every member keeps for replicas that reconnect (wal_keep_size) unless db.parameters
 * names it; the operator names a smaller one where the WAL's volume is small.
 */
export const defaultWalKeepMb = 128;

/** The keys of a standby cluster's source; `repository` follows the backup repository's archive. */
const standbyClusterShape = {
  host: z.string(),
  port: z.number().int(),
  primary_slot_name: z.string(),
  restore_command: z.string(),
  archive_cleanup_command: z.string(),
  recovery_min_apply_delay: z.union([z.number(), z.string()]),
  repository: z.boolean(),
  server_name: z.string(),
};

const topLevelShape = {
  ttl: z.number(),
  loop_wait: z.number(),
  retry_timeout: z.number(),
  maximum_lag_on_failover: z.number(),
  maximum_lag_on_syncnode: z.number(),
  check_timeline: z.boolean(),
  primary_start_timeout: z.number(),
  primary_hang_timeout: z.number(),
  primary_stop_timeout: z.number(),
  primary_race_backoff: z.number(),
  failsafe_mode: z.boolean(),
  pause: z.boolean(),
  /** "on" with synchronous_mode_strict is the spec's "strict". */
  synchronous_mode: z.union([z.boolean(), z.enum(['on', 'off', 'quorum'])]),
  synchronous_mode_strict: z.boolean(),
  synchronous_node_count: z.number().int(),
  member_slots_ttl: z.union([z.number(), z.string()]),
  max_timelines_history: z.number().int(),
  slots: z.record(z.string(), z.unknown()),
  ignore_slots: z.array(z.unknown()),
  /** spec.roles without passwords (those stay in the Secrets ha-node reads). */
  roles: managedRolesListSchema,
};

const dbShape = {
  use_slots: z.boolean(),
  use_rewind: z.boolean(),
  use_pg_rewind: z.boolean(),
  pg_hba: z.array(z.string()),
};

type Shape = Record<string, z.ZodType>;
const optional = <S extends Shape>(shape: S) =>
  Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as { [K in keyof S]: z.ZodOptional<S[K]> };
const removable = <S extends Shape>(shape: S) =>
  Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.nullable().optional()])) as { [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>> };

/** A whole document: what bootstrapConfig holds and what GET /config answers. */
export const dynamicConfigSchema = z
  .object({
    ...optional(topLevelShape),
    standby_cluster: z.object(optional(standbyClusterShape)).strict().optional(),
    db: z
      .object({ ...optional(dbShape), parameters: z.record(z.string(), parameterValue).optional() })
      .strict()
      .optional(),
  })
  .strict();

/** A PATCH /config body (JSON merge patch): null removes a key, also a parameter or a standby source key. */
export const dynamicConfigPatchSchema = z
  .object({
    ...removable(topLevelShape),
    standby_cluster: z.object(removable(standbyClusterShape)).strict().nullable().optional(),
    db: z
      .object({ ...removable(dbShape), parameters: z.record(z.string(), parameterValue.nullable()).nullable().optional() })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();

export type DynamicConfigInput = z.input<typeof dynamicConfigSchema>;
export type DynamicConfigPatch = z.input<typeof dynamicConfigPatchSchema>;
export type StandbyClusterInput = NonNullable<DynamicConfigInput['standby_cluster']>;
