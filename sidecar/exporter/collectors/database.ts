/** Keelson default collectors: database, table and index statistics, sizes. */
export const databaseCollectors = {
  file: 'keelson-database.yml',
  text: `
pg_db:
  name: pg_db
  desc: per-database statistics (pg_stat_database) and transaction ID age
  query: |-
    SELECT d.datname, age(d.datfrozenxid) AS age, s.numbackends, s.xact_commit, s.xact_rollback,
           s.blks_read, s.blks_hit, s.tup_returned, s.tup_fetched, s.tup_inserted, s.tup_updated, s.tup_deleted,
           s.conflicts, s.temp_files, s.temp_bytes, s.deadlocks, s.checksum_failures,
           s.blk_read_time, s.blk_write_time, extract(EPOCH FROM s.stats_reset) AS reset_time
    FROM pg_database d JOIN pg_stat_database s ON s.datid = d.oid
    WHERE d.datallowconn AND NOT d.datistemplate
  ttl: 10
  min_version: 120000
  tags: [ cluster ]
  metrics:
    - datname:           { usage: LABEL, description: database name }
    - age:               { usage: GAUGE, description: age of datfrozenxid in transactions (wraparound risk) }
    - numbackends:       { usage: GAUGE, description: backends connected }
    - xact_commit:       { usage: COUNTER, description: transactions committed }
    - xact_rollback:     { usage: COUNTER, description: transactions rolled back }
    - blks_read:         { usage: COUNTER, description: disk blocks read }
    - blks_hit:          { usage: COUNTER, description: buffer cache hits }
    - tup_returned:      { usage: COUNTER, description: rows returned }
    - tup_fetched:       { usage: COUNTER, description: rows fetched }
    - tup_inserted:      { usage: COUNTER, description: rows inserted }
    - tup_updated:       { usage: COUNTER, description: rows updated }
    - tup_deleted:       { usage: COUNTER, description: rows deleted }
    - conflicts:         { usage: COUNTER, description: queries cancelled by recovery conflicts }
    - temp_files:        { usage: COUNTER, description: temporary files created }
    - temp_bytes:        { usage: COUNTER, description: bytes written to temporary files }
    - deadlocks:         { usage: COUNTER, description: deadlocks detected }
    - checksum_failures: { usage: COUNTER, default: 0, description: data page checksum failures }
    - blk_read_time:     { usage: COUNTER, scale: 1e-3, description: seconds spent reading blocks }
    - blk_write_time:    { usage: COUNTER, scale: 1e-3, description: seconds spent writing blocks }
    - reset_time:        { usage: GAUGE, description: "when these statistics were reset, epoch seconds" }

pg_size:
  name: pg_size
  desc: database sizes and the size of the WAL directory, in bytes
  query: |-
    SELECT datname, pg_database_size(oid) AS bytes FROM pg_database WHERE datallowconn AND NOT datistemplate
    UNION ALL SELECT 'wal', coalesce((SELECT sum(size) FROM pg_ls_waldir()), 0)
  ttl: 60
  timeout: 1
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - datname: { usage: LABEL, description: "database name, or wal for the WAL directory" }
    - bytes:   { usage: GAUGE, description: size in bytes }

pg_table:
  name: pg_table
  desc: statistics of the 256 largest user tables of the connected database
  query: |-
    SELECT current_database() AS datname, s.schemaname || '.' || s.relname AS relname,
           s.seq_scan, s.seq_tup_read, s.idx_scan, s.idx_tup_fetch,
           s.n_tup_ins, s.n_tup_upd, s.n_tup_del, s.n_tup_hot_upd, s.n_live_tup, s.n_dead_tup, s.n_mod_since_analyze,
           s.vacuum_count, s.autovacuum_count, s.analyze_count, s.autoanalyze_count,
           extract(EPOCH FROM greatest(s.last_vacuum, s.last_autovacuum)) AS last_vacuum,
           extract(EPOCH FROM greatest(s.last_analyze, s.last_autoanalyze)) AS last_analyze,
           io.heap_blks_read, io.heap_blks_hit, io.idx_blks_read, io.idx_blks_hit,
           pg_total_relation_size(s.relid) AS size_bytes, age(c.relfrozenxid) AS frozenxid_age
    FROM pg_stat_user_tables s
    JOIN pg_statio_user_tables io ON io.relid = s.relid
    JOIN pg_class c ON c.oid = s.relid
    ORDER BY c.relpages DESC LIMIT 256
  ttl: 10
  timeout: 2
  min_version: 130000
  metrics:
    - datname:             { usage: LABEL, description: database name }
    - relname:             { usage: LABEL, description: schema-qualified table name }
    - seq_scan:            { usage: COUNTER, default: 0, description: sequential scans }
    - seq_tup_read:        { usage: COUNTER, default: 0, description: rows read by sequential scans }
    - idx_scan:            { usage: COUNTER, default: 0, description: index scans }
    - idx_tup_fetch:       { usage: COUNTER, default: 0, description: rows fetched by index scans }
    - n_tup_ins:           { usage: COUNTER, description: rows inserted }
    - n_tup_upd:           { usage: COUNTER, description: rows updated }
    - n_tup_del:           { usage: COUNTER, description: rows deleted }
    - n_tup_hot_upd:       { usage: COUNTER, description: rows HOT updated }
    - n_live_tup:          { usage: GAUGE, description: estimated live rows }
    - n_dead_tup:          { usage: GAUGE, description: estimated dead rows }
    - n_mod_since_analyze: { usage: GAUGE, description: rows modified since the last analyze }
    - vacuum_count:        { usage: COUNTER, description: manual vacuums }
    - autovacuum_count:    { usage: COUNTER, description: autovacuums }
    - analyze_count:       { usage: COUNTER, description: manual analyzes }
    - autoanalyze_count:   { usage: COUNTER, description: autoanalyzes }
    - last_vacuum:         { usage: GAUGE, description: "last vacuum of any kind, epoch seconds" }
    - last_analyze:        { usage: GAUGE, description: "last analyze of any kind, epoch seconds" }
    - heap_blks_read:      { usage: COUNTER, default: 0, description: heap blocks read from disk }
    - heap_blks_hit:       { usage: COUNTER, default: 0, description: heap blocks found in the buffer cache }
    - idx_blks_read:       { usage: COUNTER, default: 0, description: index blocks read from disk }
    - idx_blks_hit:        { usage: COUNTER, default: 0, description: index blocks found in the buffer cache }
    - size_bytes:          { usage: GAUGE, description: "total size including indexes and TOAST, bytes" }
    - frozenxid_age:       { usage: GAUGE, description: age of relfrozenxid in transactions }

pg_query:
  name: pg_query
  desc: the 64 statements with the most execution time (pg_stat_statements), calls > 4
  # pg_stat_statements(false): the view passes true, which reads every statement's text from the
  # extension's text file on each call; no metric here needs the text.
  query: |-
    SELECT d.datname, r.rolname AS username, s.queryid::text AS queryid,
           s.calls, s.rows, s.total_exec_time AS exec_time, s.total_plan_time AS plan_time,
           s.shared_blks_hit, s.shared_blks_read, s.shared_blks_dirtied, s.shared_blks_written,
           s.temp_blks_written, s.wal_bytes
    FROM pg_stat_statements(false) s
    JOIN pg_database d ON d.oid = s.dbid
    JOIN pg_roles r ON r.oid = s.userid
    WHERE s.calls > 4
    ORDER BY s.total_exec_time DESC LIMIT 64
  ttl: 10
  timeout: 2
  min_version: 130000
  tags: [ cluster, "extension:pg_stat_statements" ]
  metrics:
    - datname:             { usage: LABEL, description: database name }
    - username:            { usage: LABEL, description: role that ran the statement }
    - queryid:             { usage: LABEL, description: statement fingerprint }
    - calls:               { usage: COUNTER, description: times executed }
    - rows:                { usage: COUNTER, description: rows returned or affected }
    - exec_time:           { usage: COUNTER, scale: 1e-3, description: seconds spent executing }
    - plan_time:           { usage: COUNTER, scale: 1e-3, description: seconds spent planning }
    - shared_blks_hit:     { usage: COUNTER, description: shared buffer hits }
    - shared_blks_read:    { usage: COUNTER, description: shared blocks read }
    - shared_blks_dirtied: { usage: COUNTER, description: shared blocks dirtied }
    - shared_blks_written: { usage: COUNTER, description: shared blocks written }
    - temp_blks_written:   { usage: COUNTER, description: temporary blocks written }
    - wal_bytes:           { usage: COUNTER, description: WAL bytes generated }
`,
};
