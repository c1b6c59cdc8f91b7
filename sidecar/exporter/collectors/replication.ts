/** Keelson default collectors: replication (sender and receiver sides) and replication slots. */
export const replicationCollectors = {
  file: 'keelson-replication.yml',
  text: `
pg_repl:
  name: pg_repl
  desc: replication connections served by this server (WAL senders)
  query: |-
    SELECT application_name AS appname, coalesce(host(client_addr), 'local') AS address, state, sync_state,
           sync_priority,
           CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END - '0/0' AS lsn,
           sent_lsn - '0/0' AS sent_lsn, write_lsn - '0/0' AS write_lsn, flush_lsn - '0/0' AS flush_lsn, replay_lsn - '0/0' AS replay_lsn,
           (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END) - replay_lsn AS replay_diff,
           extract(EPOCH FROM write_lag) AS write_lag, extract(EPOCH FROM flush_lag) AS flush_lag, extract(EPOCH FROM replay_lag) AS replay_lag,
           extract(EPOCH FROM backend_start) AS backend_start
    FROM pg_stat_replication
  ttl: 10
  min_version: 100000
  tags: [ cluster ]
  metrics:
    - appname:       { usage: LABEL, description: application_name of the replica }
    - address:       { usage: LABEL, description: "client address, or local for a socket" }
    - state:         { usage: LABEL, description: sender state }
    - sync_state:    { usage: LABEL, description: "async, potential, sync or quorum" }
    - sync_priority: { usage: GAUGE, description: priority for synchronous standby choice }
    - lsn:           { usage: COUNTER, description: current WAL location of this server in bytes }
    - sent_lsn:      { usage: COUNTER, description: "last WAL location sent, bytes" }
    - write_lsn:     { usage: COUNTER, description: "last WAL location written by the replica, bytes" }
    - flush_lsn:     { usage: COUNTER, description: "last WAL location flushed by the replica, bytes" }
    - replay_lsn:    { usage: COUNTER, description: "last WAL location replayed by the replica, bytes" }
    - replay_diff:   { usage: GAUGE, description: bytes the replica's replay is behind }
    - write_lag:     { usage: GAUGE, description: write lag in seconds }
    - flush_lag:     { usage: GAUGE, description: flush lag in seconds }
    - replay_lag:    { usage: GAUGE, description: replay lag in seconds }
    - backend_start: { usage: GAUGE, description: "when the sender started, unix epoch seconds" }

pg_recv:
  name: pg_recv
  desc: WAL receiver of a replica
  query: |-
    SELECT coalesce(slot_name, '') AS slot_name, status, sender_host, sender_port, received_tli AS timeline,
           flushed_lsn - '0/0' AS flush_lsn, latest_end_lsn - '0/0' AS latest_end_lsn,
           extract(EPOCH FROM last_msg_send_time) AS last_msg_send_time,
           extract(EPOCH FROM last_msg_receipt_time) AS last_msg_receipt_time
    FROM pg_stat_wal_receiver
  ttl: 10
  min_version: 130000
  tags: [ cluster, replica ]
  metrics:
    - slot_name:             { usage: LABEL, description: replication slot used }
    - status:                { usage: LABEL, description: receiver status }
    - sender_host:           { usage: LABEL, description: primary host }
    - sender_port:           { usage: LABEL, description: primary port }
    - timeline:              { usage: GAUGE, description: timeline of the last received WAL }
    - flush_lsn:             { usage: COUNTER, description: "WAL received and flushed, bytes" }
    - latest_end_lsn:        { usage: COUNTER, description: "last WAL location reported to the sender, bytes" }
    - last_msg_send_time:    { usage: GAUGE, description: "send time of the last message from the primary, epoch seconds" }
    - last_msg_receipt_time: { usage: GAUGE, description: "receipt time of the last message, epoch seconds" }

pg_slot:
  name: pg_slot
  desc: replication slots and the WAL they retain
  query: |-
    SELECT slot_name, slot_type, coalesce(plugin, '') AS plugin, coalesce(database, '') AS datname,
           active, temporary,
           coalesce(wal_status, '') AS wal_status,
           (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END) - restart_lsn AS retained_bytes,
           safe_wal_size,
           confirmed_flush_lsn - '0/0' AS confirmed_flush_lsn,
           age(xmin) AS xmin_age, age(catalog_xmin) AS catalog_xmin_age
    FROM pg_replication_slots
  ttl: 10
  min_version: 130000
  tags: [ cluster ]
  metrics:
    - slot_name:           { usage: LABEL, description: slot name }
    - slot_type:           { usage: LABEL, description: physical or logical }
    - plugin:              { usage: LABEL, description: output plugin of a logical slot }
    - datname:             { usage: LABEL, description: database of a logical slot }
    - active:              { usage: GAUGE, description: 1 when a consumer is connected }
    - temporary:           { usage: GAUGE, description: 1 for a temporary slot }
    - wal_status:          { usage: LABEL, description: "reserved, extended, unreserved or lost" }
    - retained_bytes:      { usage: GAUGE, description: WAL bytes retained by the slot }
    - safe_wal_size:       { usage: GAUGE, description: bytes that can still be written before the slot is lost }
    - confirmed_flush_lsn: { usage: COUNTER, description: "location confirmed by a logical consumer, bytes" }
    - xmin_age:            { usage: GAUGE, description: age of the slot's xmin in transactions }
    - catalog_xmin_age:    { usage: GAUGE, description: age of the slot's catalog_xmin in transactions }
`,
};
