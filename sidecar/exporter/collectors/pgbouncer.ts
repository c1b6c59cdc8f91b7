/**
 * Keelson default collectors for a PgBouncer admin console (the pooler pods' exporter): lists,
 * databases (with `paused`), per-database statistics and pools, as pg_exporter's own pgbouncer
 * collectors for the PgBouncer versions Keelson ships (1.18). The planner runs them only against
 * a console (URL database "pgbouncer") and skips them against PostgreSQL.
 */
export const pgbouncerCollectors = {
  file: 'keelson-pgbouncer.yml',
  text: `
pgbouncer_list:
  name: pgbouncer_list
  desc: Pgbouncer entry list
  query: SHOW LISTS;
  ttl: 10
  min_version: 10800
  fatal: true
  tags: [ pgbouncer ]
  metrics:
    - list:                { usage: LABEL                 ,description: "Pgbouncer internal list name" }
    - items:               { usage: GAUGE                 ,description: "Number of corresponding pgbouncer object" }

pgbouncer_database_116:
  name: pgbouncer_database
  desc: Pgbouncer database stats (1.16-1.22)
  query: SHOW DATABASES;
  ttl: 10
  min_version: 11600
  max_version: 12300
  tags: [ pgbouncer ]
  metrics:
    - name:                { usage: LABEL ,rename: datname      ,description: "Name of configured database entry" }
    - host:                { usage: LABEL                       ,description: "Host that pgbouncer will connects to" }
    - port:                { usage: LABEL                       ,description: "Port that pgbouncer will connects to" }
    - database:            { usage: LABEL ,rename: real_datname ,description: "The real database name pgbouncer connects to" }
    - force_user:          { usage: DISCARD }
    - pool_size:           { usage: GAUGE                       ,description: "Maximum number of server connections" }
    - min_pool_size:       { usage: GAUGE                       ,description: "Minimum number of server connections" }
    - reserve_pool:        { usage: GAUGE                       ,description: "Maximum number of additional connections for this database" }
    - pool_mode:           { usage: DISCARD }
    - max_connections:     { usage: GAUGE                       ,description: "Maximum number of allowed connections for this database" }
    - current_connections: { usage: GAUGE                       ,description: "Current number of connections for this database" }
    - paused:              { usage: GAUGE                       ,description: "True(1) if this database is currently paused, else 0" }
    - disabled:            { usage: GAUGE                       ,description: "True(1) if this database is currently disabled, else 0" }

pgbouncer_stat_108:
  name: pgbouncer_stat
  desc: Pgbouncer stats per database (1.08 - 1.22)
  query: SHOW STATS;
  ttl: 10
  min_version: 10800
  max_version: 12300
  tags: [ pgbouncer ]
  metrics:
    - database:                      { usage: LABEL   ,rename: datname ,description: "Name of database" }
    - total_xact_count:              { usage: COUNTER                  ,description: "Total number of SQL transactions pooled by pgbouncer" }
    - total_query_count:             { usage: COUNTER                  ,description: "Total number of SQL queries pooled by pgbouncer" }
    - total_received:                { usage: COUNTER                  ,description: "Total volume in bytes of network traffic received by pgbouncer" }
    - total_sent:                    { usage: COUNTER                  ,description: "Total volume in bytes of network traffic sent by pgbouncer" }
    - total_xact_time:               { usage: COUNTER ,scale: 1e-6     ,description: "Total number of seconds spent when in a transaction" }
    - total_query_time:              { usage: COUNTER ,scale: 1e-6     ,description: "Total number of seconds spent when executing queries" }
    - total_wait_time:               { usage: COUNTER ,scale: 1e-6     ,description: "Time spent by clients waiting for a server, in seconds" }
    - avg_xact_count:                { usage: GAUGE                    ,description: "Average transactions per second in last stat period" }
    - avg_query_count:               { usage: GAUGE                    ,description: "Average queries per second in last stat period" }
    - avg_recv:                      { usage: GAUGE                    ,description: "Average received (from clients) bytes per second" }
    - avg_sent:                      { usage: GAUGE                    ,description: "Average sent (to clients) bytes per second" }
    - avg_xact_time:                 { usage: GAUGE   ,scale: 1e-6     ,description: "Average transaction duration, in seconds" }
    - avg_query_time:                { usage: GAUGE   ,scale: 1e-6     ,description: "Average query duration, in seconds" }
    - avg_wait_time:                 { usage: GAUGE   ,scale: 1e-6     ,description: "Time spent by clients waiting for a server, in seconds (average per second)." }

pgbouncer_pool_118:
  name: pgbouncer_pool
  desc: Pgbouncer pool stats (1.18-1.23)
  query: SHOW POOLS;
  ttl: 10
  min_version: 11800
  max_version: 12400
  tags: [ pgbouncer ]
  metrics:
    - database:              { usage: LABEL, rename: datname,                description: "Database name of this pool" }
    - user:                  { usage: LABEL,                                 description: "User name of this pool" }
    - cl_active:             { usage: GAUGE, rename: active_clients,         description: "Client connections that are linked to server connection and can process queries" }
    - cl_waiting:            { usage: GAUGE, rename: waiting_clients,        description: "Client connections that have sent queries but have not yet got a server connection" }
    - cl_active_cancel_req:  { usage: GAUGE, rename: active_cancel_clients,  description: "Client connections that have forwarded query cancellations to the server and are waiting for the server response." }
    - cl_waiting_cancel_req: { usage: GAUGE, rename: cancel_clients,         description: "Client connections that have not forwarded query cancellations to the server yet." }
    - sv_active:             { usage: GAUGE, rename: active_servers,         description: "Server connections that are linked to a client" }
    - sv_active_cancel:      { usage: GAUGE, rename: active_cancel_servers,  description: "Server connections that are currently forwarding a cancel request" }
    - sv_being_canceled:     { usage: GAUGE, rename: cancel_servers,         description: "cancel requests have completed that were sent to cancel a query on this server" }
    - sv_idle:               { usage: GAUGE, rename: idle_servers,           description: "Server connections that are unused and immediately usable for client queries" }
    - sv_used:               { usage: GAUGE, rename: used_servers,           description: "Server connections that have been idle for more than server_check_delay (means have to run check query)" }
    - sv_tested:             { usage: GAUGE, rename: tested_servers,         description: "Server connections that are currently running reset or check query" }
    - sv_login:              { usage: GAUGE, rename: login_servers,          description: "Server connections currently in the process of logging in" }
    - maxwait:               { usage: GAUGE,                                 description: "How long the first(oldest) client in the queue has waited, in seconds, key metric" }
    - maxwait_us:            { usage: GAUGE,                                 description: "Microsecond part of the maximum waiting time." }
    - pool_mode:             { usage: LABEL,                                 description: "Pooling mode in use" }
`,
};
