import { formatLsn } from '../postgres/lsn.js';
import { volumesSection } from '../disk/document.js';
import { dbStateText } from '../postgres/state.js';
import { isQuorumStandby, isSyncStandby, roleOf, type NodeSnapshot } from '../ha/snapshot.js';

/** The node state document (GET /ha and every health endpoint), keys in Patroni's order. */
export function nodeDocument(snapshot: NodeSnapshot): Record<string, unknown> {
  const status = snapshot.status;
  const doc: Record<string, unknown> = {};
  doc.state = status ? 'running' : snapshot.dbState === 'running' ? 'unknown' : dbStateText(snapshot.dbState);
  const role = roleOf(snapshot);
  if (status) {
    doc.postmaster_start_time = status.postmasterStartTime;
    doc.role = role;
    doc.server_version = status.serverVersion;
    doc.xlog = status.inRecovery
      ? {
          received_location: status.receivedLocation ?? status.replayedLocation ?? 0,
          replayed_location: status.replayedLocation ?? 0,
          replayed_timestamp: status.replayedTimestamp,
          paused: status.paused,
        }
      : { location: status.location ?? 0 };
    if (isSyncStandby(snapshot)) doc.sync_standby = true;
    if (isQuorumStandby(snapshot)) doc.quorum_standby = true;
    doc.timeline = status.timeline;
    if (status.replicationState) doc.replication_state = status.replicationState;
    if (status.replication.length > 0) {
      doc.replication = status.replication.map((r) => ({
        usename: r.usename,
        application_name: r.application_name,
        client_addr: r.client_addr,
        state: r.state,
        sync_state: r.sync_state,
        sync_priority: r.sync_priority,
      }));
    }
  } else {
    doc.role = role;
  }
  if (snapshot.paused) doc.pause = true;
  if (!snapshot.cluster || !snapshot.cluster.leader) doc.cluster_unlocked = true;
  if (snapshot.failsafeActive) doc.failsafe_mode_is_active = true;
  doc.dcs_last_seen = snapshot.dcsLastSeen;
  const tags = Object.fromEntries(Object.entries(snapshot.tags).filter(([, v]) => v !== false && v !== undefined && v !== null));
  if (Object.keys(tags).length > 0) doc.tags = tags;
  const sysid = status?.systemIdentifier ?? snapshot.systemIdentifier;
  if (sysid) doc.database_system_identifier = sysid;
  if (snapshot.pendingRestart) {
    doc.pending_restart = true;
    if (snapshot.pendingRestartReason) doc.pending_restart_reason = snapshot.pendingRestartReason;
  }
  if (snapshot.configErrors) doc.config_errors = snapshot.configErrors;
  Object.assign(doc, volumesSection(snapshot.volumes));
  if (snapshot.demotion) {
    const d = snapshot.demotion;
    doc.standby_demotion = {
      database_system_identifier: d.systemIdentifier,
      timeline: d.timeline,
      checkpoint_location: d.checkpointLocation,
      checkpoint_lsn: formatLsn(d.checkpointLocation),
      at: d.at,
    };
  }
  doc.ha = { version: snapshot.version, scope: snapshot.scope, name: snapshot.name };
  return doc;
}
