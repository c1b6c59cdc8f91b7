/**
 * The PgBouncer side of the contract: the pool modes and the [pgbouncer] settings a DatabaseCluster
 * may set (the CRD checks spec.pooler.parameters against the list, the pooler checks its settings
 * file against it again).
 */
export type PoolMode = 'transaction' | 'session';

/** Settings a user may set through spec.pooler.parameters; the rest belong to the operator. */
export const allowedPgbouncerParameters: readonly string[] = [
  'server_idle_timeout',
  'server_lifetime',
  'server_connect_timeout',
  'server_login_retry',
  'query_timeout',
  'query_wait_timeout',
  'client_idle_timeout',
  'client_login_timeout',
  'idle_transaction_timeout',
  'reserve_pool_size',
  'reserve_pool_timeout',
  'min_pool_size',
  'max_db_connections',
  'max_user_connections',
  'log_connections',
  'log_disconnections',
  'log_pooler_errors',
  'stats_period',
  'tcp_keepalive',
  'ignore_startup_parameters',
  'max_prepared_statements',
];
