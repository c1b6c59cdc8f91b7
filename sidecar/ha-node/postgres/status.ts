import pg from 'pg';
import { parseLsn } from './lsn.js';

/** One snapshot of a running server, read in a single round trip. */
export interface ServerStatus {
  inRecovery: boolean;
  postmasterStartTime: string;
  serverVersion: number;
  timeline: number;
  systemIdentifier: string;
  /** Primary: current flush position. */
  location?: number;
  receivedLocation?: number;
  replayedLocation?: number;
  replayedTimestamp: string | null;
  paused: boolean;
  /** Replica: 'streaming' when the WAL receiver streams, 'in archive recovery' otherwise. */
  replicationState?: string;
  receiverHost?: string;
  /** Standby: the end of the sender's WAL as its last message reported it (pg_stat_wal_receiver.latest_end_lsn). */
  senderEndLocation?: number;
  replication: ReplicationRow[];
  synchronousStandbyNames: string;
}

export interface ReplicationRow {
  usename: string;
  application_name: string;
  client_addr: string | null;
  state: string;
  sync_state: string;
  sync_priority: number;
  flush_lsn?: number;
  replay_lsn?: number;
  /** Milliseconds since the standby's last reply (server clock); null before its first reply. */
  reply_age_ms?: number | null;
}

const statusSql = `
SELECT pg_is_in_recovery() AS in_recovery,
       to_char(pg_postmaster_start_time() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00:00' AS start_time,
       current_setting('server_version_num')::int AS version,
       (SELECT system_identifier::text FROM pg_control_system()) AS sysid,
       CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_flush_lsn()::text END AS flush_lsn,
       CASE WHEN pg_is_in_recovery() THEN NULL
            ELSE ('x' || substr(pg_walfile_name(pg_current_wal_flush_lsn()), 1, 8))::bit(32)::int END AS primary_tli,
       pg_last_wal_receive_lsn()::text AS receive_lsn,
       pg_last_wal_replay_lsn()::text AS replay_lsn,
       to_char(pg_last_xact_replay_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS replay_ts,
       CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END AS paused,
       (SELECT status FROM pg_stat_wal_receiver LIMIT 1) AS receiver_status,
       (SELECT received_tli FROM pg_stat_wal_receiver LIMIT 1) AS received_tli,
       (SELECT sender_host FROM pg_stat_wal_receiver LIMIT 1) AS sender_host,
       (SELECT latest_end_lsn::text FROM pg_stat_wal_receiver LIMIT 1) AS sender_end_lsn,
       (SELECT timeline_id FROM pg_control_checkpoint()) AS checkpoint_tli,
       current_setting('synchronous_standby_names') AS sync_names,
       COALESCE((SELECT json_agg(json_build_object(
            'usename', usename, 'application_name', application_name, 'client_addr', host(client_addr),
            'state', state, 'sync_state', sync_state, 'sync_priority', sync_priority,
            'flush_lsn', flush_lsn::text, 'replay_lsn', replay_lsn::text,
            'reply_age_ms', (EXTRACT(EPOCH FROM clock_timestamp() - reply_time) * 1000)::bigint) ORDER BY application_name)
          FROM pg_stat_replication), '[]'::json) AS replication`;

interface StatusRow {
  in_recovery: boolean;
  start_time: string;
  version: number;
  sysid: string;
  flush_lsn: string | null;
  primary_tli: number | null;
  receive_lsn: string | null;
  replay_lsn: string | null;
  replay_ts: string | null;
  paused: boolean;
  receiver_status: string | null;
  received_tli: number | null;
  sender_host: string | null;
  sender_end_lsn: string | null;
  checkpoint_tli: number;
  sync_names: string;
  replication: (Omit<ReplicationRow, 'flush_lsn' | 'replay_lsn'> & { flush_lsn: string | null; replay_lsn: string | null })[];
}

export async function readServerStatus(client: pg.ClientBase): Promise<ServerStatus> {
  const { rows } = await client.query<StatusRow>(statusSql);
  const row = rows[0]!;
  const received = parseLsn(row.receive_lsn);
  const replayed = parseLsn(row.replay_lsn);
  return {
    inRecovery: row.in_recovery,
    postmasterStartTime: row.start_time,
    serverVersion: row.version,
    timeline: row.in_recovery ? (row.received_tli ?? row.checkpoint_tli) : (row.primary_tli ?? row.checkpoint_tli),
    systemIdentifier: row.sysid,
    location: parseLsn(row.flush_lsn),
    receivedLocation: received,
    replayedLocation: replayed,
    replayedTimestamp: row.replay_ts ? `${row.replay_ts}+00:00` : null,
    paused: row.paused,
    replicationState: row.in_recovery ? (row.receiver_status === 'streaming' ? 'streaming' : 'in archive recovery') : undefined,
    receiverHost: row.sender_host ?? undefined,
    senderEndLocation: parseLsn(row.sender_end_lsn),
    synchronousStandbyNames: row.sync_names,
    replication: row.replication.map((r) => ({ ...r, flush_lsn: parseLsn(r.flush_lsn), replay_lsn: parseLsn(r.replay_lsn) })),
  };
}
