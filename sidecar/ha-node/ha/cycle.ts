import type { ClusterView } from '../dcs/types.js';
import type { ServerStatus } from '../postgres/status.js';
import { isPaused, readPendingRestart } from '../ops/loop-decisions.js';
import { bootstrapOrClone } from './duties/bootstrap.js';
import { handleDcsError } from './duties/dcs-outage.js';
import { effectiveHangTimeout } from './watches/hang-rules.js';
import { handleSilentServer, noteProbe } from './duties/hang-watch.js';
import { leadWithLock, restartCrashedPrimary } from './duties/leader-duties.js';
import { scheduleSoon, type LoopContext } from './loop-context.js';
import { handOverDueFor } from './duties/manual-failover.js';
import { publish } from './records/member-record.js';
import { race } from './duties/race.js';
import { followLeader, startStoppedReplica } from './duties/replica-duties.js';
import { effectiveConfig, validHbaLines } from './settings.js';
import { keepSourceConfig, leadStandby, restartStandbyLeader } from './duties/standby-duties.js';
import { serverParameters } from './sync/standby-replies.js';
import { readFileSettingErrors, refreshSettingsCatalog, screenDynamicParameters } from './duties/parameter-screen.js';
import { nextStreamingLook } from './watches/streaming-watch.js';
import {
  clusterRead,
  volumesMeasured,
  cycleStarted,
  dynamicConfigRead,
  failsafeActive,
  pendingRestartRead,
  runningSeen,
  serverAnswered,
  statusRead,
  systemChecked,
  takeConfigChange,
} from './state.js';
import { volumesNow } from '../disk/usage.js';

/**
 * One HA cycle: read the cluster, take at most one decision about PostgreSQL, publish this member.
 * noteAction logs the decision before the member record goes out.
 */
export async function runCycle(ctx: LoopContext, noteAction: (action: string) => void): Promise<string> {
  const { dcs, pg, state } = ctx;
  cycleStarted(state);
  let cluster: ClusterView;
  try {
    // The watch cache unless the API server has been silent for two loop_waits (a renewal is due every one).
    cluster = await dcs.clusterForLoop(2 * state.config.loop_wait * 1000 + 1000);
  } catch (error) {
    return handleDcsError(ctx, error);
  }
  failsafeActive(state, false);
  // A failsafe contact is kept although the API answers (Patroni keeps it on replicas too): the
  // primary may be cut off alone, and it keeps this replica out of the race until ttl after its
  // last confirmation (failsafeHoldsOff).
  applyConfig(ctx, cluster);
  keepSourceConfig(ctx, cluster);
  clusterRead(state, cluster);
  volumesMeasured(state, volumesNow(pg.settings.dataDir));

  if (!pg.isInitialized()) {
    // Publish first so the leader creates our replication slot while we clone.
    await publish(ctx);
    const action = await bootstrapOrClone(ctx, cluster);
    noteAction(action);
    await publish(ctx);
    return action;
  }

  if (cluster.initialize && !(await sameSystem(ctx, cluster.initialize))) {
    return `refusing to run: the data directory belongs to another cluster than ${cluster.initialize}`;
  }

  const running = pg.isRunning();
  ctx.heartbeat.keep(running && cluster.leader?.holder === ctx.options.name, effectiveHangTimeout(state.config));
  let status: ServerStatus | undefined;
  let probeError: unknown;
  if (running) {
    ({ status, probeError } = await probeUnlessHung(ctx));
    noteProbe(ctx, status, probeError);
  }
  statusRead(state, status);
  if (status) {
    await applyParameters(ctx, status);
    // A due switchover skips this query: until the clean stop every millisecond delays the hand-over.
    const pending = handOverDueFor(ctx, cluster) ? undefined : await readPendingRestart((sql) => pg.query(sql)).catch(() => undefined);
    if (pending) pendingRestartRead(state, pending);
    serverAnswered(state, status.systemIdentifier);
    pg.markRunning();
  }
  if (!running && state.wasRunning && pg.state === 'running') pg.markCrashed();
  runningSeen(state, running);

  if (cluster.initialize === undefined && status && dcs.isLeader()) await dcs.setInitialize(status.systemIdentifier);

  const action = !running ? await handleStopped(ctx, cluster) : !status ? await handleSilentServer(ctx, cluster) : await handleRunning(ctx, cluster, status);
  noteAction(action);
  await publish(ctx);
  const look = nextStreamingLook(state, status, performance.now());
  if (look !== undefined) scheduleSoon(ctx, look);
  return action;
}

/** The cycle's status probe, given up as soon as the heartbeat judges the server hung (its bounds would delay the fence). */
async function probeUnlessHung(ctx: LoopContext): Promise<{ status: ServerStatus | undefined; probeError: unknown }> {
  const { heartbeat, pg } = ctx;
  if (heartbeat.hung()) return { status: undefined, probeError: new Error('hung') };
  const watch = heartbeat.untilHung();
  try {
    return await Promise.race([
      pg.status().then(
        (status) => ({ status, probeError: undefined }),
        (error: unknown) => ({ status: undefined, probeError: error }),
      ),
      watch.hung.then(() => ({ status: undefined, probeError: new Error('hung') })),
    ]);
  } finally {
    watch.cancel();
  }
}

/** The data directory's system identifier must match the cluster's initialize key (checked once). */
async function sameSystem(ctx: LoopContext, initialize: string): Promise<boolean> {
  if (ctx.state.checkedSystem === initialize) return true;
  const control = await ctx.pg.controlData();
  if (!control?.systemIdentifier) return true;
  if (control.systemIdentifier !== initialize) {
    ctx.options.logger.error({ local: control.systemIdentifier, cluster: initialize }, 'system identifier mismatch');
    return false;
  }
  systemChecked(ctx.state, initialize);
  return true;
}

function applyConfig(ctx: LoopContext, cluster: ClusterView): void {
  const { pg, state } = ctx;
  const next = effectiveConfig(ctx.options.baseConfig, cluster.config);
  const stored = cluster.config?.db?.pg_hba;
  const hbaRefused = stored !== undefined && validHbaLines(stored, next.parameters) === undefined;
  // A hand-edited DCS object with a bad line: keep the rules in force rather than fall back to the defaults.
  if (hbaRefused) next.pg_hba = state.config.pg_hba;
  if (hbaRefused && !state.hbaRefused)
    ctx.options.logger.error('db.pg_hba in the dynamic configuration holds lines PostgreSQL would refuse; keeping the rules in force');
  const paramsChanged = JSON.stringify(serverParameters(next)) !== JSON.stringify(serverParameters(state.config));
  const hbaChanged = JSON.stringify(next.pg_hba) !== JSON.stringify(state.config.pg_hba);
  dynamicConfigRead(state, next, { paused: isPaused(cluster.config), hbaRefused, changed: paramsChanged || hbaChanged });
  screenDynamicParameters(ctx);
  pg.configure({ hba: next.pg_hba });
}

/** Applies changed parameters to a running server (once we know its role, so nothing is lost). */
async function applyParameters(ctx: LoopContext, status: ServerStatus): Promise<void> {
  const { pg, state } = ctx;
  if (!takeConfigChange(state)) return;
  // pg_settings of this very server: a restart may have brought another version or extension.
  await refreshSettingsCatalog(ctx);
  screenDynamicParameters(ctx);
  const following = pg.followingLeader();
  if (status.inRecovery) pg.writeConfig(following ?? undefined, true);
  else pg.writeConfig(undefined, false);
  await pg.reload().catch(() => undefined);
  await readFileSettingErrors(ctx);
}

async function handleStopped(ctx: LoopContext, cluster: ClusterView): Promise<string> {
  statusRead(ctx.state, undefined);
  const standby = ctx.state.config.standby_cluster;
  if (cluster.leader?.holder === ctx.options.name) return standby ? restartStandbyLeader(ctx, standby) : restartCrashedPrimary(ctx, cluster);
  return startStoppedReplica(ctx, cluster);
}

async function handleRunning(ctx: LoopContext, cluster: ClusterView, status: ServerStatus): Promise<string> {
  const leader = cluster.leader;
  const standby = ctx.state.config.standby_cluster;
  if (leader?.holder === ctx.options.name) return standby ? leadStandby(ctx, cluster, status, standby) : leadWithLock(ctx, cluster, status);
  if (leader) return followLeader(ctx, cluster, leader, status);
  return race(ctx, cluster, status);
}
