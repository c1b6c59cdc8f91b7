import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { lastDue, parseCron } from '../../lib/cron.js';
import type { BackupSpec } from '../../api/crd/backup-types.js';
import type { Condition, DatabaseCluster } from '../../api/crd/types.js';
import { apiStatusCode } from '../../lib/kube/client.js';
import type { BackupObject } from '../../api/crd/backup-kind.js';
import { backupSecretRefs, buildBackupClaims } from '../builders/backup.js';
import { buildScheduledBackup } from '../builders/backup-object.js';
import type { RawCluster } from '../kube-api.js';
import { backupMember, backupsOf, expiredBackups, isActive, runBackupObjects } from './backup-objects.js';
import type { BuildContext } from '../builders/context.js';
import type { HaBackupStatus, HaClusterMember } from '../hanode-client.js';
import type { ReconcileDeps } from './deps.js';
import { WalArchivingCondition, walArchivingVerdict } from './wal-archiving.js';
import type { BackupVerdict } from './verdict.js';

/**
 * The operator's half of backups: the filesystem repositories' claims, the BackupReady condition
 * (missing Secret, unreachable repository, failed restore: each a reason, an Event, never a
 * crash loop), and the schedules: a cron time that has passed creates a Backup object, which
 * backup-objects.ts runs on the chosen member (see the ADR on operator-driven schedules).
 */

export const BackupReadyCondition = 'BackupReady';

export type ScheduleKind = 'full' | 'differential' | 'incremental';
type LastScheduled = Partial<Record<ScheduleKind | 'initial', string>>;
const backupTypeOf: Record<ScheduleKind, 'full' | 'diff' | 'incr'> = { full: 'full', differential: 'diff', incremental: 'incr' };

export type { BackupVerdict } from './verdict.js';

/** The condition from what was observed; pure. */
export function backupVerdict(
  missingSecrets: string[],
  primary: string | undefined,
  observed: HaBackupStatus | undefined,
  observeError: string | undefined,
): BackupVerdict {
  if (missingSecrets.length > 0) return { status: 'False', reason: 'SecretMissing', message: missingSecrets.join('; ') };
  if (observed?.restore && !observed.restore.ok) return { status: 'False', reason: 'RestoreFailed', message: observed.restore.message };
  if (!primary) return { status: 'Unknown', reason: 'NoPrimary', message: 'no primary to archive WAL yet' };
  if (!observed) return { status: 'Unknown', reason: 'HaNodeUnreachable', message: observeError ?? 'the primary did not report its backup status' };
  if (observed.stanzaReady) {
    if (observed.lastBackup && !observed.lastBackup.ok) return { status: 'False', reason: 'BackupFailed', message: observed.lastBackup.message };
    return { status: 'True', reason: 'ArchivingWorks', message: 'WAL archiving checked; backups can run' };
  }
  if (observed.archive && !observed.archive.ok) return { status: 'False', reason: 'RepositoryUnreachable', message: observed.archive.message };
  return { status: 'Unknown', reason: 'StanzaPending', message: 'creating the stanza and checking archiving' };
}

/** The condition object, keeping its transition time while the status stays the same. */
export function backupCondition(verdict: BackupVerdict, previous: Condition | undefined, generation: number | undefined, now: Date): Condition {
  const lastTransitionTime = previous && previous.status === verdict.status ? previous.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    type: BackupReadyCondition,
    status: verdict.status,
    reason: verdict.reason,
    message: verdict.message.slice(0, 1000),
    lastTransitionTime,
    observedGeneration: generation,
  };
}

/** The schedule whose latest cron time has passed since it last ran (full first); pure. */
export function dueSchedule(backup: BackupSpec, lastRuns: LastScheduled, since: Date, now: Date): { kind: ScheduleKind; dueAt: string } | undefined {
  for (const kind of ['full', 'differential', 'incremental'] as const) {
    const expression = backup.schedules[kind];
    if (!expression) continue;
    const due = lastDue(parseCron(expression), now);
    if (!due) continue;
    const last = lastRuns[kind] ? new Date(lastRuns[kind]) : since;
    if (due.getTime() > last.getTime()) return { kind, dueAt: due.toISOString() };
  }
  return undefined;
}

async function missingSecrets(deps: ReconcileDeps, ctx: BuildContext): Promise<string[]> {
  const problems: string[] = [];
  for (const ref of backupSecretRefs(ctx)) {
    const secret = await deps.api.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: ref.name, namespace: ctx.cluster.metadata.namespace } });
    if (!secret) problems.push(`Secret ${ref.name} (${ref.field}) not found`);
    else
      for (const key of ref.keys)
        if (secret.data?.[key] === undefined && secret.stringData?.[key] === undefined) problems.push(`Secret ${ref.name} has no key ${key} (${ref.field})`);
  }
  return problems;
}

async function ensureClaims(deps: ReconcileDeps, ctx: BuildContext): Promise<void> {
  for (const claim of buildBackupClaims(ctx)) {
    if (await deps.api.read(claim)) continue; // shared and kept: created once, never rewritten
    deps.recordWrite('PersistentVolumeClaim', 'create');
    await deps.api.create(claim);
    await deps.events.record(ctx.cluster.metadata, 'Normal', 'CreatedBackupVolume', `created ${claim.metadata!.name} for the filesystem backup repository`);
  }
}

export interface BackupPass {
  condition: BackupVerdict;
  lastScheduled: LastScheduled;
  backups?: number;
  lastBackupTime?: string;
  /** A Backup object of this cluster is pending or running. */
  active: boolean;
  /** Condition WalArchiving, when the primary was observed (wal-archiving.ts). */
  walArchiving?: BackupVerdict;
}

/** Creates a Backup object; one that exists already (a repeated pass) counts as created. */
async function createBackupObject(deps: ReconcileDeps, object: BackupObject): Promise<void> {
  deps.recordWrite('Backup', 'create');
  await deps.api.createBackup(object.metadata.namespace, object as unknown as RawCluster).catch((error: unknown) => {
    if (apiStatusCode(error) !== 409) throw error;
  });
}

/**
 * A Backup whose set retention removed shows it: phase Expired, with when it was noticed. The
 * object stays (it is the record of a backup that was taken; deleting it is the user's call).
 */
async function markExpired(deps: ReconcileDeps, cluster: DatabaseCluster, expired: BackupObject[], now: Date): Promise<void> {
  for (const backup of expired) {
    const message = `removed from repository ${backup.status!.repositoryIndex ?? 1} by the retention policy (spec.backup.retention); noticed ${now.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
    deps.recordWrite('Backup', 'update');
    await deps.api.replaceBackupStatus({
      ...(backup as unknown as RawCluster),
      status: { ...backup.status, phase: 'Expired', message } as Record<string, unknown>,
    });
    await deps.events.record(cluster.metadata, 'Normal', 'BackupExpired', `Backup ${backup.metadata.name} (${backup.status!.label}): ${message}`);
  }
}

/** A failed restore of a standby cluster names the spec field it came from (ha-node speaks of its own settings). */
export function namedRestoreField(verdict: BackupVerdict, cluster: DatabaseCluster): BackupVerdict {
  const repository = cluster.spec.replica?.source.repository;
  if (verdict.reason !== 'RestoreFailed' || repository === undefined) return verdict;
  return { ...verdict, message: `spec.replica.source.repository (${repository}): ${verdict.message}` };
}

/** One pass: claims, condition (with an Event when its reason changes), and a due scheduled backup. */
export async function reconcileBackup(
  deps: ReconcileDeps,
  ctx: BuildContext,
  pods: V1Pod[],
  primary: string | undefined,
  now: Date,
  members?: HaClusterMember[],
): Promise<BackupPass | undefined> {
  const cluster: DatabaseCluster = ctx.cluster;
  const backup = cluster.spec.backup;
  if (!backup) return undefined;
  await ensureClaims(deps, ctx);
  const missing = await missingSecrets(deps, ctx);
  const host = pods.find((pod) => pod.metadata?.name === primary)?.status?.podIP;
  // Before a primary exists, a failed restore shows on the member that tried it.
  const asked = host ?? pods.find((pod) => pod.status?.podIP)?.status?.podIP;
  let observed: HaBackupStatus | undefined;
  let observeError: string | undefined;
  if (asked && missing.length === 0) {
    observed = await deps.haNode.backupStatus(asked).catch((error: Error) => {
      observeError = error.message;
      return undefined;
    });
  }
  const condition = namedRestoreField(backupVerdict(missing, host ? primary : undefined, observed, observeError), cluster);
  const previous = cluster.status?.conditions?.find((c: Condition) => c.type === BackupReadyCondition);
  if (condition.status === 'False' && (previous?.reason !== condition.reason || previous.message !== condition.message)) {
    await deps.events.record(cluster.metadata, 'Warning', condition.reason, condition.message);
  }
  const lastScheduled: LastScheduled = { ...(cluster.status?.backup?.lastScheduled ?? {}) };
  const good = (observed?.info?.backups ?? []).filter((b) => !b.error);
  let objects = backupsOf(await deps.api.listBackups(cluster.metadata.namespace), cluster.metadata.name);
  // New Backup objects only while archiving works and none is waiting: missed times collapse into one.
  if (host && observed?.stanzaReady && !objects.some(isActive)) {
    const created = cluster.metadata.creationTimestamp ? new Date(cluster.metadata.creationTimestamp) : now;
    const due = dueSchedule(backup, lastScheduled, created, now);
    // Not waiting for the repository listing: a pass without it would let a due schedule go first,
    // and an extra full backup where one already exists costs only space retention reclaims.
    const initial = backup.schedules.immediate && !lastScheduled.initial && good.length === 0;
    // The first full backup goes before a schedule that falls due in the same pass: it serves that
    // time as well (a full is what an incremental without a prior full becomes anyway).
    const object = initial
      ? buildScheduledBackup(ctx, 'full', 'initial')
      : due
        ? buildScheduledBackup(ctx, backupTypeOf[due.kind], { schedule: due.kind, dueAt: due.dueAt })
        : undefined;
    if (object) {
      await createBackupObject(deps, object);
      if (due) lastScheduled[due.kind] = due.dueAt;
      if (initial) lastScheduled.initial = now.toISOString();
      await deps.events.record(
        cluster.metadata,
        'Normal',
        'BackupScheduled',
        `created Backup ${object.metadata.name} (${initial ? 'first backup once archiving works' : `schedule ${due!.kind}: ${backup.schedules[due!.kind]}`})`,
      );
      objects = backupsOf(await deps.api.listBackups(cluster.metadata.namespace), cluster.metadata.name);
    }
  }
  const member = host && primary && observed?.stanzaReady ? backupMember(backup.target, { name: primary, host }, pods, members) : undefined;
  const observe = (target: string) => (target === host && observed ? Promise.resolve(observed) : deps.haNode.backupStatus(target).catch(() => undefined));
  const pass = await runBackupObjects(deps, cluster, objects, pods, member, observe, now);
  await markExpired(deps, cluster, expiredBackups(objects, observed?.info), now);
  const walArchiving = host ? walArchivingVerdict(observed, backup.archiveTimeout) : undefined;
  const previousArchiving = cluster.status?.conditions?.find((c: Condition) => c.type === WalArchivingCondition);
  if (walArchiving?.status === 'False' && previousArchiving?.reason !== walArchiving.reason)
    await deps.events.record(cluster.metadata, 'Warning', walArchiving.reason, walArchiving.message);
  return {
    condition,
    lastScheduled,
    backups: observed?.info ? good.length : undefined,
    lastBackupTime: good.at(-1)?.stoppedAt,
    active: pass.active,
    ...(walArchiving ? { walArchiving } : {}),
  };
}
