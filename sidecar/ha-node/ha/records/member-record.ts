import type { MemberRecord } from '../../dcs/types.js';
import type { PostgresInstance } from '../../postgres/instance.js';
import { dbStateText } from '../../postgres/state.js';
import { connUrl, type HaLoopOptions, type ListenAddress, type LoopContext } from '../loop-context.js';
import { isStandbyLeader, walPositionOf, type NodeSnapshot } from '../snapshot.js';
import { publishedUsage } from '../../disk/usage.js';

/** The member record this node publishes, from its last observed status (or its offline role). */
export function memberRecord(
  options: Pick<HaLoopOptions, 'name' | 'apiUrl' | 'tags' | 'version'>,
  pg: ListenAddress & Pick<PostgresInstance, 'state'>,
  snapshot: Pick<NodeSnapshot, 'status' | 'offlineRole' | 'pendingRestart' | 'demotion' | 'configErrors' | 'volumes'>,
  now: number,
  standbyLeader = false,
): MemberRecord {
  const status = snapshot.status;
  return {
    name: options.name,
    conn_url: connUrl(pg),
    api_url: options.apiUrl,
    host: pg.settings.connectHost,
    port: pg.settings.port,
    role: status ? (!status.inRecovery ? 'primary' : standbyLeader ? 'standby_leader' : 'replica') : snapshot.offlineRole,
    state: status?.replicationState ?? dbStateText(pg.state),
    timeline: status?.timeline,
    xlog_location: status ? walPositionOf(status) : undefined,
    receive_lsn: status?.receivedLocation,
    replay_lsn: status?.replayedLocation,
    replication_state: status?.replicationState,
    tags: options.tags,
    version: options.version,
    heartbeat: now,
    pending_restart: snapshot.pendingRestart || undefined,
    system_identifier: status?.systemIdentifier,
    standby_source: standbyLeader ? standbySourceOf(status) : undefined,
    standby_demotion: demotionRecord(snapshot.demotion),
    config_errors: snapshot.configErrors,
    ...(snapshot.volumes ? { volumes: publishedUsage(snapshot.volumes) } : {}),
  };
}

/** Where the remote source stands, as far as the standby leader's WAL receiver last heard (none while it does not stream). */
function standbySourceOf(status: NodeSnapshot['status']): MemberRecord['standby_source'] {
  if (status?.senderEndLocation === undefined) return undefined;
  return { timeline: status.timeline, lsn: status.senderEndLocation };
}

function demotionRecord(demotion: NodeSnapshot['demotion']): MemberRecord['standby_demotion'] {
  if (!demotion) return undefined;
  return { system_identifier: demotion.systemIdentifier, timeline: demotion.timeline, checkpoint_location: demotion.checkpointLocation, at: demotion.at };
}

/** Publishes the member record (skipped while the API is unreachable) and the pod role label. */
export async function publish(ctx: LoopContext): Promise<void> {
  const { dcs, state } = ctx;
  if (state.dcsUnreachable) return;
  const status = state.snapshot.status;
  const standbyLeader = isStandbyLeader(status, dcs.isLeader(), state.config);
  // The standby leader carries the primary label as the designated primary of its cluster: the
  // -rw Service reaches it, read-only, until the cluster is promoted.
  const role = status && dcs.isLeader() && (!status.inRecovery || standbyLeader) ? 'primary' : 'replica';
  const record = { ...memberRecord(ctx.options, ctx.pg, state.snapshot, Date.now(), standbyLeader), switchover_aborted: state.switchoverAbort };
  await dcs.touchMember(record).catch((error: Error) => ctx.options.logger.warn({ err: error.message }, 'could not publish the member record'));
  if (status) await ctx.options.setRoleLabel?.(role);
}
