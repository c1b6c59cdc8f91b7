import { dbStateNumber, DbStates } from '../postgres/state.js';
import { isQuorumStandby, isSyncStandby, roleOf, type NodeSnapshot } from '../ha/snapshot.js';

/** "1.4.12" → "010412": each part zero-padded to two digits, as Patroni publishes its version. */
export function versionNumber(version: string): string {
  return version
    .split(/[.-]/)
    .slice(0, 3)
    .map((part) => String(Number.parseInt(part, 10) || 0).padStart(2, '0'))
    .join('');
}

function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function epochSeconds(timestamp: string | null | undefined): number {
  if (!timestamp) return 0;
  const ms = Date.parse(timestamp.replace(' ', 'T'));
  return Number.isFinite(ms) ? ms / 1000 : 0;
}

/** The labels every ha_* sample carries. */
export function metricLabels(scope: string, name: string): string {
  return `{scope="${labelValue(scope)}",name="${labelValue(name)}"}`;
}

/** Prometheus text for every ha_* metric of the spec, labels scope and name on every sample. */
export function renderMetrics(snapshot: NodeSnapshot): string {
  const labels = metricLabels(snapshot.scope, snapshot.name);
  const status = snapshot.status;
  const role = roleOf(snapshot);
  const replica = status !== undefined && status.inRecovery;
  const out: string[] = [];
  const metric = (name: string, type: string, help: string, value: number | string, extra?: string): void => {
    out.push(`# HELP ${name} ${help}`);
    if (extra) out.push(extra);
    out.push(`# TYPE ${name} ${type}`);
    out.push(`${name}${labels} ${value}`);
  };
  const bool = (b: boolean): number => (b ? 1 : 0);
  metric('ha_version', 'gauge', 'ha-node version without periods.', versionNumber(snapshot.version));
  metric('ha_db_running', 'gauge', 'Value is 1 if the database is running, 0 otherwise.', bool(status !== undefined));
  metric('ha_postmaster_start_time', 'gauge', 'Epoch seconds since the database started.', epochSeconds(status?.postmasterStartTime));
  metric('ha_primary', 'gauge', 'Value is 1 if this node is the leader, 0 otherwise.', bool(snapshot.isLeader && role === 'primary'));
  metric(
    'ha_xlog_location',
    'counter',
    'Current location of the WAL, 0 if this node is not the leader.',
    status && !status.inRecovery ? (status.location ?? 0) : 0,
  );
  metric('ha_standby_leader', 'gauge', 'Value is 1 if this node is the standby leader, 0 otherwise.', bool(role === 'standby_leader'));
  metric('ha_replica', 'gauge', 'Value is 1 if this node is a replica, 0 otherwise.', bool(replica && role !== 'standby_leader'));
  metric('ha_sync_standby', 'gauge', 'Value is 1 if this node is a synchronous standby, 0 otherwise.', bool(isSyncStandby(snapshot)));
  metric('ha_quorum_standby', 'gauge', 'Value is 1 if this node is a quorum standby, 0 otherwise.', bool(isQuorumStandby(snapshot)));
  metric(
    'ha_xlog_received_location',
    'counter',
    'Current location of the received WAL, 0 if this node is not a replica.',
    replica ? (status.receivedLocation ?? 0) : 0,
  );
  metric(
    'ha_xlog_replayed_location',
    'counter',
    'Current location of the replayed WAL, 0 if this node is not a replica.',
    replica ? (status.replayedLocation ?? 0) : 0,
  );
  metric('ha_xlog_replayed_timestamp', 'gauge', 'Timestamp of the last replayed transaction, 0 if null.', replica ? epochSeconds(status.replayedTimestamp) : 0);
  metric('ha_xlog_paused', 'gauge', 'Value is 1 if WAL replay is paused, 0 otherwise.', bool(replica && status.paused));
  metric(
    'ha_db_streaming',
    'gauge',
    'Value is 1 if the database is streaming WAL from the primary, 0 otherwise.',
    bool(replica && status.replicationState === 'streaming'),
  );
  metric(
    'ha_db_in_archive_recovery',
    'gauge',
    'Value is 1 if the database is replicating from the archive, 0 otherwise.',
    bool(replica && status.replicationState === 'in archive recovery'),
  );
  metric('ha_db_server_version', 'gauge', 'Version of the database (if running), 0 otherwise.', status?.serverVersion ?? 0);
  metric('ha_cluster_unlocked', 'gauge', 'Value is 1 if the cluster is unlocked, 0 if locked.', bool(!snapshot.cluster?.leader));
  metric('ha_failsafe_mode_is_active', 'gauge', 'Value is 1 if failsafe mode is active, 0 if inactive.', bool(snapshot.failsafeActive));
  metric('ha_db_timeline', 'counter', 'Database timeline of this node (if running), 0 otherwise.', status?.timeline ?? 0);
  metric('ha_dcs_last_seen', 'gauge', 'Epoch timestamp when the DCS was last contacted successfully.', snapshot.dcsLastSeen);
  metric('ha_pending_restart', 'gauge', 'Value is 1 if the node needs a restart, 0 otherwise.', bool(snapshot.pendingRestart));
  metric('ha_is_paused', 'gauge', 'Value is 1 if automatic failover is disabled, 0 otherwise.', bool(snapshot.paused));
  const state = status ? 'running' : snapshot.dbState;
  metric(
    'ha_db_state',
    'gauge',
    'Numeric representation of the database state.',
    dbStateNumber(state),
    `# Values: ${DbStates.map((name, index) => `${index}=${name}`).join(', ')}`,
  );
  return `${out.join('\n')}\n`;
}
