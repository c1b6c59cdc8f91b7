import type { ClusterView, HistoryEntry, MemberRecord } from '../dcs/types.js';
import { formatLsn } from '../postgres/lsn.js';
import type { ClusterDocument, ClusterMember } from '../../../api/ha-node/rest-documents.js';

/** GET /cluster: members sorted by name with roles, states and lag against the leader position. */
export function clusterDocument(cluster: ClusterView, scope: string): ClusterDocument {
  const holder = cluster.leader?.holder;
  const leaderMember = cluster.members.find((m) => m.name === holder);
  const leaderPosition = Math.max(cluster.leaderRecord?.optime ?? 0, leaderMember?.xlog_location ?? 0);
  const syncNames = new Set(cluster.sync?.sync_standby ?? []);
  // Patroni names the lock holder of a standby cluster standby_leader (it replays, it does not write).
  const holderRole = cluster.config?.standby_cluster ? 'standby_leader' : 'leader';
  const members = [...cluster.members]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((m) => {
      const item: ClusterMember = {
        name: m.name,
        role: m.name === holder ? holderRole : syncNames.has(m.name) ? (cluster.sync?.quorum === undefined ? 'sync_standby' : 'quorum_standby') : 'replica',
        state: m.replication_state ?? m.state,
        api_url: m.api_url,
        host: m.host,
        port: m.port,
      };
      if (m.timeline !== undefined) item.timeline = m.timeline;
      if (m.pending_restart) item.pending_restart = true;
      if (Array.isArray(m.config_errors) && m.config_errors.length > 0) item.config_errors = m.config_errors;
      if (m.tags && Object.keys(m.tags).length > 0) item.tags = m.tags;
      if (m.system_identifier) item.system_identifier = m.system_identifier;
      if (m.volumes) item.volumes = m.volumes;
      if (m.standby_demotion) item.standby_demotion = { ...m.standby_demotion, checkpoint_lsn: formatLsn(m.standby_demotion.checkpoint_location) };
      if (m.name === holder && holderRole === 'standby_leader') Object.assign(item, standbySourceItem(m));
      if (m.name !== holder) {
        const lagFrom = (position: number | undefined): number | 'unknown' => (position === undefined ? 'unknown' : Math.max(0, leaderPosition - position));
        const lsnOf = (position: number | undefined): string | 'unknown' => (position === undefined ? 'unknown' : formatLsn(position));
        item.receive_lag = lagFrom(m.receive_lsn);
        item.receive_lsn = lsnOf(m.receive_lsn);
        item.replay_lag = lagFrom(m.replay_lsn);
        item.replay_lsn = lsnOf(m.replay_lsn);
        item.lag = lagFrom(m.xlog_location);
        item.lsn = lsnOf(m.xlog_location);
      }
      return item;
    });
  const doc: ClusterDocument = { members, scope };
  if (cluster.failover?.scheduled_at) {
    doc.scheduled_switchover = { at: cluster.failover.scheduled_at, from: cluster.failover.leader, to: cluster.failover.member };
  }
  return doc;
}

/** The standby leader's position behind its remote source: the source's timeline and lag in bytes (replayed against the source's WAL end). */
function standbySourceItem(member: MemberRecord): Partial<ClusterMember> {
  const item: Partial<ClusterMember> = {};
  if (member.replay_lsn !== undefined) item.replay_lsn = formatLsn(member.replay_lsn);
  if (member.standby_source) {
    item.source_timeline = member.standby_source.timeline;
    item.source_lsn = formatLsn(member.standby_source.lsn);
    if (member.replay_lsn !== undefined) item.source_lag = Math.max(0, member.standby_source.lsn - member.replay_lsn);
  }
  return item;
}

/** GET /history: [timeline, lsn, reason, timestamp] per entry. */
export function historyDocument(history: HistoryEntry[]): [number, number, string, string][] {
  return history.map(([timeline, lsn, reason, timestamp]) => [timeline, lsn, reason, timestamp]);
}
