import type { Logger } from '../../lib/log.js';
import type { DatabaseCluster, DatabaseClusterStatus } from '../../api/crd/types.js';
import { apiFallbacks } from '../capabilities.js';
import type { Applied } from './apply-owned.js';
import { certificatesCondition, CertificatesReadyCondition, reportCertificateProblems } from '../certificates/ensure.js';
import { BackupReadyCondition, backupCondition, reconcileBackup } from './backup.js';
import type { ConfigSyncResult } from './config-sync.js';
import { revisionLabel, type Day2Step, type SwitchoverState } from './day2.js';
import type { ReconcileDeps } from './deps.js';
import type { Observed } from './observe.js';
import { autoGrowVolumes } from './auto-grow.js';
import { reconcileManaged } from './managed.js';
import { WalArchivingCondition } from './wal-archiving.js';
import { poolerStatus } from './pooler-status.js';
import { describeReplicaSource } from './replica-source.js';
import { replicaStatusOf, stampCondition } from './replica-status.js';
import { ApiFallbackCondition, computeStatus } from './status.js';
import { names } from '../../api/naming.js';
import { describeApiError } from '../../lib/kube/client.js';

/** What the pass did after applying: the day-2 step it took and the dynamic configuration's sync. */
export interface Day2Outcome {
  switchover: SwitchoverState | undefined;
  step: Day2Step | undefined;
  stepFailed: boolean;
  configPending: ConfigSyncResult;
}

export interface StatusPartInput {
  deps: ReconcileDeps;
  cluster: DatabaseCluster;
  seen: Observed;
  applied: Applied;
  day2: Day2Outcome;
  log: Logger;
  now: Date;
}

/** What a status part tells the pass's requeue beside the status itself. */
export interface StatusNotes {
  /** A backup runs: followed closely, though the cluster is not failing to converge. */
  backupActive?: boolean;
  /** Declared roles or Databases are not in place yet: the pass is still converging. */
  managedWaiting?: boolean;
}

/** Adds one part to the status computeStatus made (and acts on what that part covers). */
type StatusPart = (input: StatusPartInput, status: DatabaseClusterStatus) => Promise<StatusNotes | void>;

/** The parts beyond computeStatus, in this order. */
const statusParts: StatusPart[] = [
  poolerPart,
  reportFallbacks,
  certificatesPart,
  systemIdentifierPart,
  replicaPart,
  autoGrowPart,
  backupPart,
  appliedConfigHashPart,
  managedPart,
];

/** The status a pass writes: computeStatus, then every part in turn. */
export async function composeStatus(input: StatusPartInput): Promise<{ status: DatabaseClusterStatus; notes: StatusNotes }> {
  const { cluster, seen, applied, day2, now, deps } = input;
  const updateRevision = applied.statefulSet?.status?.updateRevision;
  const outdatedPods = updateRevision
    ? seen.pods.filter((pod) => pod.metadata?.labels?.[revisionLabel] && pod.metadata.labels[revisionLabel] !== updateRevision).length
    : 0;
  // Until the cluster is Ready, Ready waits for `-rw`'s endpoints to list the primary (one read a pass).
  const wasReady = cluster.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const rwRoutes = wasReady
    ? undefined
    : await deps.api.routedAddresses(cluster.metadata.namespace, names(cluster.metadata.name).rwService).catch((error: unknown) => {
        // Without the read (an older ClusterRole), Ready follows the pods alone, as before.
        input.log.warn({ err: describeApiError(error) }, 'could not read the -rw endpoints; Ready follows the pods alone');
        return undefined;
      });
  const status = computeStatus({
    ...(rwRoutes ? { rwRoutes } : {}),
    cluster,
    pods: seen.pods,
    statefulSetReplicas: applied.scale.replicas,
    outdatedPods,
    haMembers: seen.members,
    primary: seen.primary,
    switchover: day2.switchover,
    targetPrimary: day2.step?.type === 'switchover' ? day2.step.candidate : undefined,
    apiFallbacks: apiFallbacks(seen.capabilities, cluster.spec.monitoring.serviceMonitor.enabled),
    applied: true,
    now,
  });
  const notes: StatusNotes = {};
  for (const part of statusParts) Object.assign(notes, await part(input, status));
  return { status, notes };
}

async function poolerPart({ deps, cluster, seen }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  const pooler = await poolerStatus(deps, cluster, seen.pods, seen.primary);
  if (pooler) status.pooler = pooler;
}

/** One Event when what falls back on this server changes (not on every pass). */
async function reportFallbacks({ deps, cluster }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  const next = status.conditions?.find((c) => c.type === ApiFallbackCondition);
  const previous = cluster.status?.conditions?.find((c) => c.type === ApiFallbackCondition);
  if (!next || next.status !== 'True' || (previous?.status === 'True' && previous.message === next.message)) return;
  await deps.events.record(cluster.metadata, 'Warning', 'ApiFallback', next.message);
}

/** CertificatesReady, and one Warning Event per problem the previous condition did not report (certificates/ensure.ts). */
async function certificatesPart({ deps, cluster, seen, applied, now }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  const previous = cluster.status?.conditions?.find((c) => c.type === CertificatesReadyCondition);
  await reportCertificateProblems(deps, seen.ctx, applied.certificates, previous);
  status.conditions = [...(status.conditions ?? []), certificatesCondition(applied.certificates, previous, cluster.metadata.generation, now)];
}

async function systemIdentifierPart({ seen }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  if (seen.systemIdentifier) status.systemIdentifier = seen.systemIdentifier;
}

async function replicaPart({ deps, cluster, seen, now }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  const replica = replicaStatusOf(cluster, describeReplicaSource(cluster), seen.rolePlan, seen.members, now);
  if (replica.status) status.replica = replica.status;
  if (replica.condition)
    status.conditions = [...(status.conditions ?? []), stampCondition(replica.condition, cluster.status?.conditions, cluster.metadata.generation, now)];
  for (const event of replica.events) await deps.events.record(cluster.metadata, event.type, event.reason, event.message);
}

/** Backup upkeep (stanza, schedules) runs here, since its outcome is a condition and a status block. */
async function backupPart({ deps, cluster, seen, log, now }: StatusPartInput, status: DatabaseClusterStatus): Promise<StatusNotes> {
  const backup = await reconcileBackup(deps, seen.ctx, seen.pods, seen.primary, now, seen.members).catch((error: Error) => {
    log.warn({ err: error.message }, 'backup upkeep failed');
    return undefined;
  });
  if (!backup) return {};
  const previous = cluster.status?.conditions?.find((c) => c.type === BackupReadyCondition);
  status.conditions = [...(status.conditions ?? []), backupCondition(backup.condition, previous, cluster.metadata.generation, now)];
  if (backup.walArchiving)
    status.conditions.push(
      stampCondition({ type: WalArchivingCondition, ...backup.walArchiving }, cluster.status?.conditions, cluster.metadata.generation, now),
    );
  status.backup = {
    lastScheduled: backup.lastScheduled,
    ...(backup.backups !== undefined ? { backups: backup.backups } : {}),
    ...(backup.lastBackupTime ? { lastBackupTime: backup.lastBackupTime } : {}),
  };
  return { backupActive: backup.active };
}

async function appliedConfigHashPart({ cluster, day2 }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  if (day2.configPending.appliedHash) status.appliedConfigHash = day2.configPending.appliedHash;
  else if (cluster.status?.appliedConfigHash) status.appliedConfigHash = cluster.status.appliedConfigHash;
}

/** Declared roles and Databases: their status, the RolesReconciled condition and Events (managed.ts). */
async function managedPart({ deps, cluster, seen, log, now }: StatusPartInput, status: DatabaseClusterStatus): Promise<StatusNotes> {
  const managed = await reconcileManaged(deps, cluster, seen.pods, seen.primary, status, now).catch((error: Error) => {
    log.warn({ err: error.message }, 'managed roles and databases upkeep failed');
    return { waiting: true };
  });
  return { managedWaiting: managed.waiting };
}

/** Claims that crossed their auto-grow threshold are grown (up to max); the VolumeAutoGrow condition says how far (auto-grow.ts). */
async function autoGrowPart({ deps, cluster, seen, now }: StatusPartInput, status: DatabaseClusterStatus): Promise<void> {
  const autoGrow = await autoGrowVolumes(deps, cluster, seen.members);
  if (autoGrow) status.conditions = [...(status.conditions ?? []), stampCondition(autoGrow, cluster.status?.conditions, cluster.metadata.generation, now)];
}
