import type { Logger } from '../../../../lib/log.js';
import type { ClusterView, Dcs } from '../../dcs/types.js';
import type { PostgresInstance } from '../../postgres/instance.js';
import { parseLsn } from '../../postgres/lsn.js';
import type { ServerStatus } from '../../postgres/status.js';
import { isTrue, type EffectiveConfig } from '../settings.js';
import { nextSyncStep } from './sync-plan.js';
import { nextQuorumStep } from './quorum-plan.js';
import { synchronousModeOf } from '../../ops/eligibility.js';
import { repliesInTime, replySilenceBoundMs } from './standby-replies.js';

export interface SyncUpkeepInput {
  self: string;
  cluster: ClusterView;
  status: ServerStatus;
  config: EffectiveConfig;
  dcs: Dcs;
  pg: PostgresInstance;
  logger: Logger;
  /** Primary flush LSN at the last change of synchronous_standby_names (0 = unknown). */
  changeLsn: number;
}

/**
 * Leader side of synchronous mode (see ADR 0402): carries out one step of `nextSyncStep` and
 * returns the change LSN to remember. Off: clears synchronous_standby_names and the sync key.
 */
export async function runSyncUpkeep(input: SyncUpkeepInput): Promise<number> {
  const { self, cluster, status, config, dcs, pg, logger } = input;
  if (!config.synchronous_mode) {
    if (status.synchronousStandbyNames !== '') await pg.setSyncStandbyNames('');
    if (cluster.sync) await dcs.setSync(undefined);
    return input.changeLsn;
  }
  const eligible = new Set(cluster.members.filter((m) => m.name !== self && !isTrue(m.tags.nosync)).map((m) => m.name));
  // A standby that stopped replying counts as gone: its walsender lingers until wal_sender_timeout.
  const bound = replySilenceBoundMs(config);
  const live = status.replication.filter((r) => eligible.has(r.application_name) && repliesInTime(r, bound));
  if (synchronousModeOf(cluster.config?.synchronous_mode) === 'quorum')
    return runQuorumUpkeep(
      input,
      live.map((r) => r.application_name),
    );
  const keyIsOurs = cluster.sync?.leader === self;
  const published = keyIsOurs ? (cluster.sync?.sync_standby ?? []) : [];
  const step = nextSyncStep({
    published,
    keyIsOurs,
    currentNames: status.synchronousStandbyNames,
    strict: config.synchronous_mode_strict,
    nodeCount: config.synchronous_node_count,
    streaming: live.map((r) => ({ name: r.application_name, flushLsn: r.flush_lsn ?? 0, syncState: r.sync_state })),
    changeLsn: input.changeLsn,
  });
  if (step.kind === 'none') return input.changeLsn;
  if (step.kind === 'publish') {
    await dcs.setSync({ leader: self, sync_standby: step.key });
    logger.info({ standbys: step.key }, 'synchronous standbys published');
    return input.changeLsn;
  }
  if (!keyIsOurs || published.length !== step.key.length) await dcs.setSync({ leader: self, sync_standby: step.key });
  await pg.setSyncStandbyNames(step.names);
  const rows = await pg.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn');
  logger.info({ standbys: step.chosen, names: step.names }, 'synchronous standbys chosen');
  return parseLsn(rows[0]?.lsn) ?? 0;
}

/**
 * Quorum commit: one step of `nextQuorumStep` per cycle, either the DCS half (voters, quorum) or
 * PostgreSQL's `ANY k (...)`, never both, so a crash between them leaves a safe state.
 */
async function runQuorumUpkeep(input: SyncUpkeepInput, liveStandbys: string[]): Promise<number> {
  const { self, cluster, status, config, dcs, pg, logger } = input;
  const sync = cluster.sync;
  const key = sync?.leader === self && sync.quorum !== undefined ? { voters: sync.sync_standby, quorum: sync.quorum } : undefined;
  const active = [...liveStandbys].sort();
  const step = nextQuorumStep({
    currentNames: status.synchronousStandbyNames,
    key,
    active,
    nodeCount: config.synchronous_node_count,
    strict: config.synchronous_mode_strict,
  });
  if (step.kind === 'none') return input.changeLsn;
  if (step.kind === 'dcs') {
    await dcs.setSync({ leader: self, sync_standby: step.voters, quorum: step.quorum });
    logger.info({ voters: step.voters, quorum: step.quorum }, 'quorum voters published');
    return input.changeLsn;
  }
  await pg.setSyncStandbyNames(step.names);
  logger.info({ names: step.names }, 'quorum synchronous_standby_names set');
  return input.changeLsn;
}
