import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { InvalidSpecError, parseDatabaseCluster } from '../api/validate.js';
import { apiFallbacks } from '../capabilities.js';
import type { DatabaseCluster, DatabaseClusterStatus } from '../api/types.js';
import { desiredObjects } from '../builders/index.js';
import type { BuildContext } from '../builders/context.js';
import { buildCredentialSecret, credentialKindsOf } from '../builders/secrets.js';
import type { EventRecorder } from '../events.js';
import type { HaNodeClient, HaClusterMember } from '../hanode-client.js';
import type { OperatorKubeApi, RawCluster } from '../kube-api.js';
import { Finalizer, names, podSelector, selectorString } from '../naming.js';
import { applyObject, type WriteRecorder } from './apply.js';
import { executeStep } from './execute.js';
import { planDeclarativeSwitchover, planRollout, planScale, revisionLabel, type Day2Step } from './day2.js';
import { syncDynamicConfig } from './config-sync.js';
import { leaseHolder, primaryOf } from './primary.js';
import { ApiFallbackCondition, computeStatus, invalidSpecStatus } from './status.js';
import { statusDiffers } from './status-diff.js';
import { keepImmutableFields } from './storage.js';
import { finalize } from './finalize.js';
import { removeUnwantedPoolerObjects } from './pooler-cleanup.js';
import { poolerStatus } from './pooler-status.js';
import { build, describeRefusal, isRefusal, refusedStatus, reportRefusal } from './refusals.js';
import { ensureBackupTlsSecret, ensureSecrets, growVolumes, useApiCredentials } from './owned.js';
import { CertificatesReadyCondition, certificatesCondition, ensureCertificates, reportCertificateProblems } from '../certificates/ensure.js';
import { BackupReadyCondition, backupCondition, reconcileBackup } from './backup.js';
import { describeReplicaSource, resolveReplicaSource } from './replica-source.js';
import { replicaStatusOf, stampCondition, systemIdentifierOf } from './replica-status.js';
import { observeRole, planRole, transientSteps } from './replica-role.js';

export interface ReconcileDeps {
  api: OperatorKubeApi;
  haNode: HaNodeClient;
  events: EventRecorder;
  recordWrite: WriteRecorder;
  logger: Logger;
  operatorVersion: string;
  now?: () => Date;
}

export { isClusterLease } from './finalize.js';

export interface ReconcileResult {
  /** Reconcile again after this delay (something is still converging). */
  requeueAfterMs?: number;
  /** The delay is a floor that doubles while the cluster stays unconverged (the work queue's back-off). */
  converging?: boolean;
  /** This pass took a step: the converging back-off starts over (waits double only while nothing moves). */
  progressed?: boolean;
}

const convergingRequeueMs = 5_000;
const backupRequeueMs = 20_000;
const roleChangeRequeueMs = 1_000;
/**
 * While a swap's standby waits for its source's demotion or replays up to it, the source takes no
 * writes: every pass sooner shortens the write gap. Only these few seconds of a swap poll this often.
 */
const swapWaitRequeueMs = 250;

async function haMembers(deps: ReconcileDeps, pods: V1Pod[], primary: string | undefined): Promise<HaClusterMember[] | undefined> {
  const host = pods.find((pod) => pod.metadata?.name === primary)?.status?.podIP;
  if (!host) return undefined;
  try {
    return await deps.haNode.cluster(host);
  } catch {
    return undefined; // status then falls back to pod labels
  }
}

/** One Event when what falls back on this server changes (not on every pass). */
async function reportFallbacks(deps: ReconcileDeps, cluster: DatabaseCluster, status: DatabaseClusterStatus): Promise<void> {
  const next = status.conditions?.find((c) => c.type === ApiFallbackCondition);
  const previous = cluster.status?.conditions?.find((c) => c.type === ApiFallbackCondition);
  if (!next || next.status !== 'True' || (previous?.status === 'True' && previous.message === next.message)) return;
  await deps.events.record(cluster.metadata, 'Warning', 'ApiFallback', next.message);
}

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

/** The pass for a spec that parsed: owned objects, day-2 step, status. */
async function reconcileValid(deps: ReconcileDeps, raw: RawCluster, cluster: DatabaseCluster, now: Date): Promise<ReconcileResult> {
  const { name, namespace } = cluster.metadata;
  const log = deps.logger.child({ cluster: `${namespace}/${name}` });
  if (!raw.metadata?.finalizers?.includes(Finalizer)) {
    deps.recordWrite('DatabaseCluster', 'update');
    raw = await deps.api.replaceCluster({ ...raw, metadata: { ...raw.metadata, finalizers: [...(raw.metadata?.finalizers ?? []), Finalizer] } });
  }

  const pods = await deps.api.listPods(namespace, selectorString(podSelector(name)));
  const primary = primaryOf(pods, leaseHolder(await deps.api.readLeaderLease(namespace, names(name).leaderLease), now));
  // The one /cluster read of the pass: roles, lag, the source's timeline, a demotion record.
  const members = await haMembers(deps, pods, primary);
  const systemIdentifier = systemIdentifierOf(members) ?? cluster.status?.systemIdentifier;
  const rolePlan = planRole(cluster, members, await observeRole(deps, cluster, pods, primary, members));
  // A standby cluster whose source cannot be resolved is refused before any pod could initdb
  // (and a primary asked to follow another database system before it stops).
  const replicaSource = rolePlan.followSource
    ? await resolveReplicaSource(deps, cluster, { swapping: rolePlan.swapping, ...(systemIdentifier ? { systemIdentifier } : {}) })
    : undefined;
  const ctx: BuildContext = { cluster, operatorVersion: deps.operatorVersion, ...(replicaSource ? { standby: replicaSource.target } : {}) };
  await ensureSecrets(deps, ctx, replicaSource ? { replication: replicaSource.replication, ...(replicaSource.superuser ? { superuser: replicaSource.superuser } : {}) } : {});
  await ensureBackupTlsSecret(deps, ctx);
  const certificates = await ensureCertificates(deps, ctx);
  const capabilities = await deps.api.capabilities();
  const fallbacks = apiFallbacks(capabilities, cluster.spec.monitoring.serviceMonitor.enabled);

  await useApiCredentials(deps, ctx, pods);
  const desired = build(() => desiredObjects(ctx, capabilities));
  const observedSts = await deps.api.read(desired.find((object) => object.kind === 'StatefulSet') as V1StatefulSet);
  const scale = planScale(cluster, pods, primary, observedSts?.spec?.replicas);

  // Owned objects do not depend on each other at the API level, so they are applied concurrently.
  const results = await Promise.all(
    desired.map(async (object) => {
      if (object.kind === 'StatefulSet') {
        (object as V1StatefulSet).spec!.replicas = scale.replicas;
        object = keepImmutableFields(object as V1StatefulSet, observedSts);
      }
      const result = await applyObject(deps.api, object, deps.recordWrite);
      if (result.outcome !== 'unchanged') log.info({ kind: object.kind, name: object.metadata?.name, outcome: result.outcome }, 'applied');
      return { kind: object.kind, outcome: result.outcome, stored: result.object };
    }),
  );
  const applied = results.find((r) => r.kind === 'StatefulSet');
  const statefulSet = applied?.stored as V1StatefulSet | undefined;
  if (applied?.outcome === 'updated' && observedSts?.spec?.replicas !== scale.replicas) {
    await deps.events.record(cluster.metadata, 'Normal', 'Scaling', `instances ${observedSts?.spec?.replicas ?? 0} → ${scale.replicas}`);
  }

  await growVolumes(deps, cluster);
  const secrets = credentialKindsOf(ctx).map((which) => buildCredentialSecret(ctx, which, ''));
  const removed = await removeUnwantedPoolerObjects(deps, { name, namespace, uid: cluster.metadata.uid }, [...desired, ...secrets], capabilities.podDisruptionBudget);
  if (removed.length) {
    log.info({ removed }, 'removed pooler objects no longer wanted');
    await deps.events.record(cluster.metadata, 'Normal', 'PoolerRemoved', `removed ${removed.join(', ')}`);
  }

  // Day-2: at most one step per pass, in order of urgency.
  const switchover = planDeclarativeSwitchover(cluster, pods, primary, cluster.status?.switchover, now);
  if (switchover.state && switchover.state.result !== cluster.status?.switchover?.result && switchover.state.result !== 'Pending') {
    const type = switchover.state.result === 'Succeeded' ? 'Normal' : 'Warning';
    await deps.events.record(cluster.metadata, type, `Switchover${switchover.state.result}`, switchover.state.message ?? '');
  }
  const updateRevision = statefulSet?.status?.updateRevision;
  const steps: Day2Step[] = [scale.step, switchover.step, planRollout(cluster, pods, updateRevision, primary, scale.replicas)];
  const step = steps.find((s) => s.type === 'switchover' || s.type === 'deletePod') ?? steps.find((s) => s.type === 'wait');
  let stepFailed = false;
  if (step && step.type !== 'wait') {
    stepFailed = !(await executeStep(deps, cluster, pods, step));
  }
  // The pass's one GET /cluster also serves the pending-restart check (every member's record).
  const configPending = await syncDynamicConfig(deps, cluster, pods, primary, members, ctx.standby);

  const outdatedPods = updateRevision ? pods.filter((pod) => pod.metadata?.labels?.[revisionLabel] && pod.metadata.labels[revisionLabel] !== updateRevision).length : 0;
  const status = computeStatus({
    cluster,
    pods,
    statefulSetReplicas: scale.replicas,
    outdatedPods,
    haMembers: members,
    primary,
    switchover: switchover.state,
    targetPrimary: step?.type === 'switchover' ? step.candidate : undefined,
    apiFallbacks: fallbacks,
    applied: true,
    now,
  });
  const pooler = await poolerStatus(deps, cluster, pods, primary);
  if (pooler) status.pooler = pooler;
  await reportFallbacks(deps, cluster, status);
  const previousCertificates = cluster.status?.conditions?.find((c) => c.type === CertificatesReadyCondition);
  await reportCertificateProblems(deps, ctx, certificates, previousCertificates);
  status.conditions = [...(status.conditions ?? []), certificatesCondition(certificates, previousCertificates, cluster.metadata.generation, now)];
  if (systemIdentifier) status.systemIdentifier = systemIdentifier;
  const replica = replicaStatusOf(cluster, describeReplicaSource(cluster), rolePlan, members, now);
  if (replica.status) status.replica = replica.status;
  if (replica.condition) status.conditions = [...(status.conditions ?? []), stampCondition(replica.condition, cluster.status?.conditions, cluster.metadata.generation, now)];
  for (const event of replica.events) await deps.events.record(cluster.metadata, event.type, event.reason, event.message);
  const backup = await reconcileBackup(deps, ctx, pods, primary, now, members).catch((error: Error) => {
    log.warn({ err: error.message }, 'backup upkeep failed');
    return undefined;
  });
  if (backup) {
    const previous = cluster.status?.conditions?.find((c) => c.type === BackupReadyCondition);
    status.conditions = [...(status.conditions ?? []), backupCondition(backup.condition, previous, cluster.metadata.generation, now)];
    status.backup = { lastScheduled: backup.lastScheduled, ...(backup.backups !== undefined ? { backups: backup.backups } : {}), ...(backup.lastBackupTime ? { lastBackupTime: backup.lastBackupTime } : {}) };
  }
  if (configPending.appliedHash) status.appliedConfigHash = configPending.appliedHash;
  else if (cluster.status?.appliedConfigHash) status.appliedConfigHash = cluster.status.appliedConfigHash;
  await writeStatus(deps, raw, status);

  // A change of role is followed every second: each step waits on the other cluster or on ha-node.
  if (transientSteps.includes(rolePlan.step ?? 'Following')) return { requeueAfterMs: rolePlan.swapping && rolePlan.step !== 'Promoting' ? swapWaitRequeueMs : roleChangeRequeueMs };
  const converging = status.phase !== 'Healthy' || step !== undefined || configPending.pending || stepFailed;
  // A pass that took a step starts the back-off over. A rolling restart's next member is ready at
  // once and no watched object tells (a member restarts in about a second, often without turning
  // unready, and pending restarts live in ha-node): look again in a second, not after the back-off.
  const progressed = configPending.acted !== undefined || (!!step && step.type !== 'wait' && !stepFailed);
  if (converging) return { requeueAfterMs: configPending.acted === 'restart' ? roleChangeRequeueMs : convergingRequeueMs, converging: true, progressed };
  // A backup in progress is followed closely; that is not a cluster failing to converge.
  if (backup?.active) return { requeueAfterMs: convergingRequeueMs };
  // Schedules are checked on every pass: come back often enough to start a backup within its minute.
  const backupMs = cluster.spec.backup ? backupRequeueMs : Infinity;
  // Synchronous modes: a standby the primary drops changes no pod, so look again every ttl (NoSyncStandby).
  const syncMs = cluster.spec.ha.synchronousMode === 'off' ? Infinity : Math.min(60_000, Math.max(convergingRequeueMs, cluster.spec.ha.ttl * 1000));
  const next = Math.min(backupMs, syncMs);
  return Number.isFinite(next) ? { requeueAfterMs: next } : {};
}
