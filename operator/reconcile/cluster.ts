import { InvalidSpecError, parseDatabaseCluster } from '../../api/crd/validate.js';
import type { DatabaseCluster, DatabaseClusterStatus } from '../../api/crd/types.js';
import type { RawCluster } from '../kube-api.js';
import { Finalizer } from '../../api/naming.js';
import { applyOwned, type Applied } from './apply-owned.js';
import { executeStep } from './execute.js';
import { planDeclarativeSwitchover, planRollout, type Day2Step } from './day2.js';
import type { ReconcileDeps, ReconcileResult } from './deps.js';
import { syncDynamicConfig } from './config-sync.js';
import { observeCluster, type Observed } from './observe.js';
import { invalidSpecStatus } from './status.js';
import { composeStatus, type Day2Outcome, type StatusNotes } from './status-parts.js';
import { statusDiffers } from './status-diff.js';
import { finalize } from './finalize.js';
import { describeRefusal, isRefusal, refusedStatus, reportRefusal } from './refusals.js';
import { transientSteps } from './replica-role.js';
import { autoGrowRequeueMs } from './auto-grow.js';

export { isClusterLease } from './finalize.js';

const convergingRequeueMs = 5_000;
const backupRequeueMs = 20_000;
const roleChangeRequeueMs = 1_000;
/**
 * While a swap's standby waits for its source's demotion or replays up to it, the source takes no
 * writes: every pass sooner shortens the write gap. Only these few seconds of a swap poll this often.
 */
const swapWaitRequeueMs = 250;

async function writeStatus(deps: ReconcileDeps, raw: RawCluster, status: DatabaseClusterStatus): Promise<void> {
  if (!statusDiffers(raw.status, status)) return;
  deps.recordWrite('DatabaseCluster', 'status');
  await deps.api.replaceClusterStatus({ ...raw, status: status as Record<string, unknown> });
}

/**
 * One level-triggered pass over a DatabaseCluster: make every owned object match the spec, take
 * at most one day-2 step, and report status. Reads are cheap; writes happen only on differences.
 */
export async function reconcileCluster(deps: ReconcileDeps, raw: RawCluster): Promise<ReconcileResult> {
  const now = deps.now?.() ?? new Date();
  const { name, namespace } = raw.metadata as { name: string; namespace: string };
  const log = deps.logger.child({ cluster: `${namespace}/${name}` });
  if (raw.metadata?.deletionTimestamp) return finalize(deps, raw);

  let cluster: DatabaseCluster;
  try {
    cluster = parseDatabaseCluster(raw);
  } catch (err) {
    if (!(err instanceof InvalidSpecError)) throw err;
    const status = invalidSpecStatus(raw as { metadata: { generation?: number }; status?: DatabaseClusterStatus }, err.message, now);
    if (statusDiffers(raw.status, status)) {
      await deps.events.record(raw.metadata as { name: string; namespace: string; uid: string }, 'Warning', 'InvalidSpec', err.message);
      await writeStatus(deps, raw, status);
    }
    log.warn({ issues: err.issues }, 'invalid spec');
    return {};
  }

  try {
    return await reconcileValid(deps, raw, cluster, now);
  } catch (err) {
    if (!isRefusal(err)) throw err;
    // The next pass repeats the write after the controller's back-off; until then status and an Event say why.
    const message = describeRefusal(err);
    const current = (await deps.api.readCluster(namespace, name)) ?? raw;
    await reportRefusal(deps, cluster.metadata, current.status as DatabaseClusterStatus | undefined, message);
    await writeStatus(deps, current, refusedStatus(current.status as DatabaseClusterStatus | undefined, message, cluster.metadata.generation, now));
    throw err;
  }
}

/**
 * The pass for a spec that parsed, in four phases: observe, apply the owned objects
 * (apply-owned.ts), take at most one day-2 step, compose and write the status (status-parts.ts).
 * A feature adds an applier or a status part there, not a stanza here.
 */
async function reconcileValid(deps: ReconcileDeps, raw: RawCluster, cluster: DatabaseCluster, now: Date): Promise<ReconcileResult> {
  const { name, namespace } = cluster.metadata;
  const log = deps.logger.child({ cluster: `${namespace}/${name}` });
  raw = await ensureFinalizer(deps, raw);
  const seen = await observeCluster(deps, cluster, now);
  const applied = await applyOwned(deps, seen, log);
  const day2 = await takeDay2Step(deps, cluster, seen, applied, now);
  const { status, notes } = await composeStatus({ deps, cluster, seen, applied, day2, log, now });
  await writeStatus(deps, raw, status);
  return requeue(cluster, seen, day2, status, notes);
}

async function ensureFinalizer(deps: ReconcileDeps, raw: RawCluster): Promise<RawCluster> {
  if (raw.metadata?.finalizers?.includes(Finalizer)) return raw;
  deps.recordWrite('DatabaseCluster', 'update');
  return deps.api.replaceCluster({ ...raw, metadata: { ...raw.metadata, finalizers: [...(raw.metadata?.finalizers ?? []), Finalizer] } });
}

/** Day-2: at most one step per pass, in order of urgency; then the dynamic configuration. */
async function takeDay2Step(deps: ReconcileDeps, cluster: DatabaseCluster, seen: Observed, applied: Applied, now: Date): Promise<Day2Outcome> {
  const { pods, primary, members, ctx } = seen;
  const switchover = planDeclarativeSwitchover(cluster, pods, primary, cluster.status?.switchover, now);
  if (switchover.state && switchover.state.result !== cluster.status?.switchover?.result && switchover.state.result !== 'Pending') {
    const type = switchover.state.result === 'Succeeded' ? 'Normal' : 'Warning';
    await deps.events.record(cluster.metadata, type, `Switchover${switchover.state.result}`, switchover.state.message ?? '');
  }
  const updateRevision = applied.statefulSet?.status?.updateRevision;
  const steps: Day2Step[] = [applied.scale.step, switchover.step, planRollout(cluster, pods, updateRevision, primary, applied.scale.replicas)];
  const step = steps.find((s) => s.type === 'switchover' || s.type === 'deletePod') ?? steps.find((s) => s.type === 'wait');
  let stepFailed = false;
  if (step && step.type !== 'wait') {
    stepFailed = !(await executeStep(deps, cluster, pods, step));
  }
  // The pass's one GET /cluster also serves the pending-restart check (every member's record).
  const configPending = await syncDynamicConfig(deps, cluster, pods, primary, members, ctx.standby);
  return { switchover: switchover.state, step, stepFailed, configPending };
}

/** When to look again: soon while a role changes or the cluster converges, else on the backup and sync clocks. */
function requeue(cluster: DatabaseCluster, seen: Observed, day2: Day2Outcome, status: DatabaseClusterStatus, notes: StatusNotes): ReconcileResult {
  const { rolePlan } = seen;
  const { step, stepFailed, configPending } = day2;
  // A change of role is followed every second: each step waits on the other cluster or on ha-node.
  if (transientSteps.includes(rolePlan.step ?? 'Following'))
    return { requeueAfterMs: rolePlan.swapping && rolePlan.step !== 'Promoting' ? swapWaitRequeueMs : roleChangeRequeueMs };
  const converging = status.phase !== 'Healthy' || step !== undefined || configPending.pending || stepFailed || notes.managedWaiting === true;
  // A pass that took a step starts the back-off over. A rolling restart's next member is ready at
  // once and no watched object tells (a member restarts in about a second, often without turning
  // unready, and pending restarts live in ha-node): look again in a second, not after the back-off.
  const progressed = configPending.acted !== undefined || (!!step && step.type !== 'wait' && !stepFailed);
  if (converging) return { requeueAfterMs: configPending.acted === 'restart' ? roleChangeRequeueMs : convergingRequeueMs, converging: true, progressed };
  // A backup in progress is followed closely; that is not a cluster failing to converge.
  if (notes.backupActive) return { requeueAfterMs: convergingRequeueMs };
  // Schedules are checked on every pass: come back often enough to start a backup within its minute.
  const backupMs = cluster.spec.backup ? backupRequeueMs : Infinity;
  // Synchronous modes: a standby the primary drops changes no pod, so look again every ttl (NoSyncStandby).
  const syncMs = cluster.spec.ha.synchronousMode === 'off' ? Infinity : Math.min(60_000, Math.max(convergingRequeueMs, cluster.spec.ha.ttl * 1000));
  const next = Math.min(backupMs, syncMs, cluster.spec.storage.autoGrow || cluster.spec.walStorage?.autoGrow ? autoGrowRequeueMs : Infinity);
  return Number.isFinite(next) ? { requeueAfterMs: next } : {};
}
