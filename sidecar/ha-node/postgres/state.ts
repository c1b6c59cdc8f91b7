/** Database states with their fixed metric numbers (ha_db_state); numbers never change. */
export const DbStates = [
  'initdb',
  'initdb_failed',
  'custom_bootstrap',
  'custom_bootstrap_failed',
  'creating_replica',
  'running',
  'starting',
  'bootstrap_starting',
  'start_failed',
  'restarting',
  'restart_failed',
  'stopping',
  'stopped',
  'stop_failed',
  'crashed',
] as const;

export type DbState = (typeof DbStates)[number];

export function dbStateNumber(state: DbState | 'unknown'): number {
  return state === 'unknown' ? -1 : DbStates.indexOf(state);
}

/** The human form used in the node document (Patroni's wording: "creating replica", "start failed"). */
export function dbStateText(state: DbState | 'unknown'): string {
  switch (state) {
    case 'initdb':
      return 'initializing new cluster';
    case 'custom_bootstrap':
      return 'running custom bootstrap script';
    case 'bootstrap_starting':
      return 'starting after custom bootstrap';
    default:
      return state.replace(/_/g, ' ');
  }
}
