/** Keelson default collectors: WAL, archiver, background writer and checkpointer. */
export const walCollectors = {
  file: 'keelson-wal.yml',
  text: `
pg_wal:
  name: pg_wal
  desc: WAL generation statistics (pg_stat_wal)
  query: |-
    SELECT wal_records AS records, wal_fpi AS fpi, wal_bytes AS bytes, wal_buffers_full AS buffers_full,
           wal_write AS write, wal_sync AS sync, wal_write_time AS write_time, wal_sync_time AS sync_time,
           extract(EPOCH FROM stats_reset) AS reset_time
    FROM pg_stat_wal
  ttl: 10
  min_version: 140000
  max_version: 180000
  tags: [ cluster ]
  metrics:
    - records:      { usage: COUNTER, description: WAL records generated }
    - fpi:          { usage: COUNTER, description: full page images generated }
    - bytes:        { usage: COUNTER, description: WAL bytes generated }
    - buffers_full: { usage: COUNTER, description: times WAL data was written because the WAL buffers were full }
    - write:        { usage: COUNTER, description: WAL write requests }
    - sync:         { usage: COUNTER, description: WAL sync requests }
    - write_time:   { usage: COUNTER, scale: 1e-3, description: seconds spent writing WAL }
    - sync_time:    { usage: COUNTER, scale: 1e-3, description: seconds spent syncing WAL }
    - reset_time:   { usage: GAUGE, description: "when these statistics were reset, epoch seconds" }

pg_archiver:
  name: pg_archiver
  desc: WAL archiver progress and failures
  query: |-
    SELECT archived_count AS finish_count, failed_count,
           extract(EPOCH FROM last_archived_time) AS last_finish_time,
           extract(EPOCH FROM last_failed_time) AS last_failed_time,
           extract(EPOCH FROM now() - last_archived_time) AS last_finish_age
    FROM pg_stat_archiver
  ttl: 60
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - finish_count:     { usage: COUNTER, description: WAL files archived }
    - failed_count:     { usage: COUNTER, description: failed archive attempts }
    - last_finish_time: { usage: GAUGE, description: "last successful archive, epoch seconds" }
    - last_failed_time: { usage: GAUGE, description: "last failed archive, epoch seconds" }
    - last_finish_age:  { usage: GAUGE, description: seconds since the last successful archive }

pg_bgwriter_10:
  name: pg_bgwriter
  desc: background writer and checkpoint statistics before PostgreSQL 17
  query: |-
    SELECT checkpoints_timed, checkpoints_req, checkpoint_write_time, checkpoint_sync_time,
           buffers_checkpoint, buffers_clean, buffers_backend, maxwritten_clean, buffers_backend_fsync, buffers_alloc,
           extract(EPOCH FROM stats_reset) AS reset_time
    FROM pg_stat_bgwriter
  ttl: 10
  min_version: 100000
  max_version: 170000
  tags: [ cluster ]
  metrics:
    - checkpoints_timed:     { usage: COUNTER, description: scheduled checkpoints }
    - checkpoints_req:       { usage: COUNTER, description: requested checkpoints }
    - checkpoint_write_time: { usage: COUNTER, scale: 1e-3, description: seconds spent writing checkpoint files }
    - checkpoint_sync_time:  { usage: COUNTER, scale: 1e-3, description: seconds spent syncing checkpoint files }
    - buffers_checkpoint:    { usage: COUNTER, description: buffers written by checkpoints }
    - buffers_clean:         { usage: COUNTER, description: buffers written by the background writer }
    - buffers_backend:       { usage: COUNTER, description: buffers written directly by backends }
    - maxwritten_clean:      { usage: COUNTER, description: times the background writer stopped for writing too many buffers }
    - buffers_backend_fsync: { usage: COUNTER, description: times a backend had to fsync itself }
    - buffers_alloc:         { usage: COUNTER, description: buffers allocated }
    - reset_time:            { usage: GAUGE, description: "when these statistics were reset, epoch seconds" }

pg_bgwriter_17:
  name: pg_bgwriter
  desc: background writer statistics from PostgreSQL 17
  query: SELECT buffers_clean, maxwritten_clean, buffers_alloc, extract(EPOCH FROM stats_reset) AS reset_time FROM pg_stat_bgwriter
  ttl: 10
  min_version: 170000
  tags: [ cluster ]
  metrics:
    - buffers_clean:    { usage: COUNTER, description: buffers written by the background writer }
    - maxwritten_clean: { usage: COUNTER, description: times the background writer stopped for writing too many buffers }
    - buffers_alloc:    { usage: COUNTER, description: buffers allocated }
    - reset_time:       { usage: GAUGE, description: "when these statistics were reset, epoch seconds" }

pg_checkpointer_17:
  name: pg_checkpointer
  desc: checkpointer statistics from PostgreSQL 17
  query: SELECT num_timed, num_requested, write_time, sync_time, buffers_written, extract(EPOCH FROM stats_reset) AS reset_time FROM pg_stat_checkpointer
  ttl: 10
  min_version: 170000
  tags: [ cluster ]
  metrics:
    - num_timed:       { usage: COUNTER, description: scheduled checkpoints }
    - num_requested:   { usage: COUNTER, description: requested checkpoints }
    - write_time:      { usage: COUNTER, scale: 1e-3, description: seconds spent writing checkpoint files }
    - sync_time:       { usage: COUNTER, scale: 1e-3, description: seconds spent syncing checkpoint files }
    - buffers_written: { usage: COUNTER, description: buffers written by checkpoints }
    - reset_time:      { usage: GAUGE, description: "when these statistics were reset, epoch seconds" }

pg_checkpoint:
  name: pg_checkpoint
  desc: last checkpoint from the control file
  query: |-
    SELECT checkpoint_lsn - '0/0' AS checkpoint_lsn, redo_lsn - '0/0' AS redo_lsn, timeline_id AS tli,
           extract(EPOCH FROM checkpoint_time) AS time, extract(EPOCH FROM now() - checkpoint_time) AS elapse
    FROM pg_control_checkpoint()
  ttl: 60
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - checkpoint_lsn: { usage: COUNTER, description: "location of the last checkpoint, bytes" }
    - redo_lsn:       { usage: COUNTER, description: "redo start of the last checkpoint, bytes" }
    - tli:            { usage: GAUGE, description: timeline of the last checkpoint }
    - time:           { usage: GAUGE, description: "time of the last checkpoint, epoch seconds" }
    - elapse:         { usage: GAUGE, description: seconds since the last checkpoint }
`,
};
