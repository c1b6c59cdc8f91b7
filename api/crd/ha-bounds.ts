/**
 * Bounds of the HA timings, in seconds: one source for the DatabaseCluster CRD (spec.ha) and for
 * ha-node's validation of the dynamic configuration (PATCH/PUT /config), so a value one accepts
 * the other accepts too. ttl becomes a Lease's leaseDurationSeconds (int32 on the API server);
 * timers built from these stay far below the 2^31 ms a Node.js timer can hold.
 */
export interface Bound {
  min: number;
  max: number;
  integer: boolean;
}

const day = 24 * 3600;

export const haTimingBounds = {
  ttl: { min: 5, max: 3600, integer: true },
  loop_wait: { min: 1, max: 600, integer: true },
  retry_timeout: { min: 1, max: 600, integer: true },
  primary_start_timeout: { min: 0, max: day, integer: false },
  primary_stop_timeout: { min: 0, max: day, integer: false },
  primary_race_backoff: { min: 0, max: 3600, integer: false },
  member_slots_ttl: { min: 0, max: 365 * day, integer: false },
} as const satisfies Record<string, Bound>;

/** Counts and byte amounts: any safe integer from `min` (a lag of -1 disables the check). */
export const haCountBounds = {
  maximum_lag_on_failover: { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true },
  maximum_lag_on_syncnode: { min: -1, max: Number.MAX_SAFE_INTEGER, integer: true },
  synchronous_node_count: { min: 1, max: 1000, integer: true },
  max_timelines_history: { min: 0, max: 1_000_000, integer: true },
} as const satisfies Record<string, Bound>;

/** undefined when `value` is a number within `bound`, else what it must be. */
export function checkBound(value: unknown, bound: Bound): string | undefined {
  const within = typeof value === 'number' && Number.isFinite(value) && (!bound.integer || Number.isInteger(value)) && value >= bound.min && value <= bound.max;
  return within ? undefined : `must be ${bound.integer ? 'an integer' : 'a number'} from ${bound.min} to ${bound.max}`;
}
