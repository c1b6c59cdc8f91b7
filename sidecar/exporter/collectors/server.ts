/** Keelson default collectors: server basics (fatal), activity and backends. */
export const serverCollectors = {
  file: 'keelson-server.yml',
  text: `
pg:
  name: pg
  desc: PostgreSQL server basics; fatal, so a failure marks the scrape down
  query: |-
    SELECT extract(EPOCH FROM CURRENT_TIMESTAMP) AS timestamp,
           extract(EPOCH FROM now() - pg_postmaster_start_time()) AS uptime,
           extract(EPOCH FROM pg_postmaster_start_time()) AS boot_time,
           CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END - '0/0' AS lsn,
           CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() - '0/0' END AS receive_lsn,
           extract(EPOCH FROM pg_conf_load_time()) AS reload_time,
           CASE WHEN NOT pg_is_in_recovery() THEN 0
                WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                ELSE extract(EPOCH FROM now() - pg_last_xact_replay_timestamp()) END AS lag,
           pg_is_in_recovery() AS is_in_recovery,
           CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END AS is_wal_replay_paused
  ttl: 1
  min_version: 100000
  fatal: true
  tags: [ cluster ]
  metrics:
    - timestamp:            { usage: GAUGE, description: current database time in unix epoch seconds }
    - uptime:               { usage: GAUGE, description: seconds since the postmaster started }
    - boot_time:            { usage: GAUGE, description: postmaster start time in unix epoch seconds }
    - lsn:                  { usage: COUNTER, description: "current WAL location (write on a primary, replay on a replica) in bytes" }
    - receive_lsn:          { usage: COUNTER, description: "WAL received and synced to disk by a replica, in bytes" }
    - reload_time:          { usage: GAUGE, description: time of the last configuration load in unix epoch seconds }
    - lag:                  { usage: GAUGE, description: replica replay lag in seconds (0 on a primary or when caught up) }
    - is_in_recovery:       { usage: GAUGE, description: 1 when the server is in recovery }
    - is_wal_replay_paused: { usage: GAUGE, description: 1 when WAL replay is paused }

pg_activity:
  name: pg_activity
  desc: client backends per database and state, with the longest transaction and query durations
  query: |-
    SELECT d.datname, s.state,
           coalesce(a.count, 0) AS count,
           coalesce(a.max_xact_duration, 0) AS max_xact_duration,
           coalesce(a.max_query_duration, 0) AS max_query_duration
    FROM pg_database d
    CROSS JOIN (VALUES ('active'), ('idle'), ('idle in transaction'), ('idle in transaction (aborted)'), ('fastpath function call'), ('disabled')) AS s(state)
    LEFT JOIN (
      SELECT datname, state, count(*) AS count,
             max(extract(EPOCH FROM now() - xact_start)) AS max_xact_duration,
             max(extract(EPOCH FROM now() - query_start)) AS max_query_duration
      FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
      GROUP BY datname, state) a ON a.datname = d.datname AND a.state = s.state
    WHERE d.datallowconn AND NOT d.datistemplate
  ttl: 10
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - datname:            { usage: LABEL, description: database name }
    - state:              { usage: LABEL, description: backend state }
    - count:              { usage: GAUGE, description: client backends in this state }
    - max_xact_duration:  { usage: GAUGE, description: "longest running transaction in this state, seconds" }
    - max_query_duration: { usage: GAUGE, description: "longest running query in this state, seconds" }

pg_backend:
  name: pg_backend
  desc: server processes by backend type
  query: SELECT backend_type AS type, count(*) AS count FROM pg_stat_activity GROUP BY backend_type
  ttl: 10
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - type:  { usage: LABEL, description: backend type }
    - count: { usage: GAUGE, description: processes of this type }

pg_lock:
  name: pg_lock
  desc: locks held or awaited per database and mode
  query: |-
    SELECT d.datname, m.mode, coalesce(l.count, 0) AS count
    FROM pg_database d
    CROSS JOIN (VALUES ('AccessShareLock'), ('RowShareLock'), ('RowExclusiveLock'), ('ShareUpdateExclusiveLock'),
                       ('ShareLock'), ('ShareRowExclusiveLock'), ('ExclusiveLock'), ('AccessExclusiveLock')) AS m(mode)
    LEFT JOIN (SELECT database, mode, count(*) AS count FROM pg_locks WHERE database IS NOT NULL GROUP BY database, mode) l
      ON l.database = d.oid AND l.mode = m.mode
    WHERE d.datallowconn AND NOT d.datistemplate
  ttl: 10
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - datname: { usage: LABEL, description: database name }
    - mode:    { usage: LABEL, description: lock mode }
    - count:   { usage: GAUGE, description: locks of this mode }

pg_lock_waiting:
  name: pg_lock_waiting
  desc: lock requests not granted yet
  query: SELECT count(*) FILTER (WHERE NOT granted) AS count FROM pg_locks
  ttl: 10
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - count: { usage: GAUGE, description: lock requests not granted yet }

pg_setting:
  name: pg_setting
  desc: important server settings (memory sizes in bytes)
  query: |-
    SELECT current_setting('max_connections')::int AS max_connections,
           current_setting('max_prepared_transactions')::int AS max_prepared_transactions,
           current_setting('max_wal_senders')::int AS max_wal_senders,
           current_setting('max_replication_slots')::int AS max_replication_slots,
           current_setting('max_worker_processes')::int AS max_worker_processes,
           pg_size_bytes(current_setting('shared_buffers')) AS shared_buffers,
           pg_size_bytes(current_setting('work_mem')) AS work_mem,
           pg_size_bytes(current_setting('maintenance_work_mem')) AS maintenance_work_mem,
           pg_size_bytes(current_setting('effective_cache_size')) AS effective_cache_size,
           pg_size_bytes(current_setting('max_wal_size')) AS max_wal_size,
           pg_size_bytes(current_setting('min_wal_size')) AS min_wal_size,
           current_setting('wal_level') = 'logical' AS wal_level_logical,
           current_setting('data_checksums')::bool AS data_checksums,
           current_setting('hot_standby')::bool AS hot_standby,
           current_setting('archive_mode') <> 'off' AS archive_mode
  ttl: 60
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - max_connections:           { usage: GAUGE, description: max_connections }
    - max_prepared_transactions: { usage: GAUGE, description: max_prepared_transactions }
    - max_wal_senders:           { usage: GAUGE, description: max_wal_senders }
    - max_replication_slots:     { usage: GAUGE, description: max_replication_slots }
    - max_worker_processes:      { usage: GAUGE, description: max_worker_processes }
    - shared_buffers:            { usage: GAUGE, description: shared_buffers in bytes }
    - work_mem:                  { usage: GAUGE, description: work_mem in bytes }
    - maintenance_work_mem:      { usage: GAUGE, description: maintenance_work_mem in bytes }
    - effective_cache_size:      { usage: GAUGE, description: effective_cache_size in bytes }
    - max_wal_size:              { usage: GAUGE, description: max_wal_size in bytes }
    - min_wal_size:              { usage: GAUGE, description: min_wal_size in bytes }
    - wal_level_logical:         { usage: GAUGE, description: 1 when wal_level is logical }
    - data_checksums:            { usage: GAUGE, description: 1 when data checksums are on }
    - hot_standby:               { usage: GAUGE, description: 1 when hot_standby is on }
    - archive_mode:              { usage: GAUGE, description: 1 when archive_mode is not off }
`,
};
