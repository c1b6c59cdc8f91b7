import type { V1Pod } from '@kubernetes/client-node';
import { backupObjectSpecSchema, type BackupObject, type BackupObjectStatus } from '../../api/crd/backup-kind.js';
import type { BackupSpec } from '../../api/crd/backup-types.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { HaBackupSet, HaBackupStatus, HaClusterMember } from '../hanode-client.js';
import type { RawCluster } from '../kube-api.js';
import type { ReconcileDeps } from './deps.js';

/**
 * Runs a cluster's Backup objects, one at a time and oldest first: a pending one starts on the
 * chosen member through ha-node's POST /backup, a running one is followed through that member's
 * GET /backup until its outcome (with pgBackRest's label, LSNs, sizes) is written to its status.
 */

export interface BackupMember {
  name: string;
  host: string;
}

/** A Backup of this cluster, its spec parsed (an object whose spec does not parse is skipped). */
export function backupsOf(raw: RawCluster[], cluster: string): BackupObject[] {
  const out: BackupObject[] = [];
  for (const item of raw) {
    const spec = backupObjectSpecSchema.safeParse(item.spec);
    if (!spec.success || spec.data.cluster !== cluster) continue;
    out.push({ ...(item as unknown as BackupObject), spec: spec.data, status: (item.status ?? {}) as BackupObjectStatus });
  }
  const created = (b: BackupObject) => `${b.metadata.creationTimestamp ?? ''}/${b.metadata.name}`;
  return out.sort((a, b) => (created(a) < created(b) ? -1 : 1));
}

/**
 * Where the next backup runs: with prefer-standby, the streaming standby with the least lag (that
 * has a pod address); the primary otherwise or when none streams. Pure.
 */
export function backupMember(target: BackupSpec['target'], primary: BackupMember, pods: V1Pod[], members: HaClusterMember[] | undefined): BackupMember {
  if (target !== 'prefer-standby' || !members) return primary;
  const lagOf = (m: HaClusterMember): number => (typeof m.lag === 'number' ? m.lag : Number.MAX_SAFE_INTEGER);
  const candidates = members
    .filter((m) => m.name !== primary.name && m.state === 'streaming' && /^(replica|sync_standby|quorum_standby)$/.test(m.role))
    .flatMap((m) => {
      const host = pods.find((p) => p.metadata?.name === m.name && !p.metadata.deletionTimestamp)?.status?.podIP;
      return host ? [{ member: { name: m.name, host }, lag: lagOf(m) }] : [];
    })
    .sort((a, b) => a.lag - b.lag || (a.member.name < b.member.name ? -1 : 1));
  return candidates[0]?.member ?? primary;
}

/** pgBackRest's repository states whose listing is complete: ok, and no valid backups. */
const listedRepositoryCodes = new Set([0, 2]);

/** When a set started, from its label (a differential or incremental one ends with its own time). */
function labelTime(label: string): string | undefined {
  return label.match(/\d{8}-\d{6}/g)?.at(-1);
}

/**
 * Completed Backups whose set the repository no longer lists: retention expired it. Only a
 * repository whose listing is complete counts (an unreachable one lists nothing), and only when
 * it lists a set that started after this one: retention removes a set only once newer ones exist,
 * and a listing without any newer set may be older than this backup (a member's listing is cached
 * for a few seconds, and the backup may have finished on another member). Pure.
 */
export function expiredBackups(objects: BackupObject[], info: HaBackupStatus['info']): BackupObject[] {
  if (!info?.backups || !info.repositories) return [];
  const complete = new Set(info.repositories.filter((r) => listedRepositoryCodes.has(r.code)).map((r) => r.repository));
  const listed = new Set(info.backups.map((b) => `${b.repository ?? 1}/${b.label}`));
  const newest = new Map<number, string>();
  for (const set of info.backups) {
    const time = labelTime(set.label);
    const repository = set.repository ?? 1;
    if (time && time > (newest.get(repository) ?? '')) newest.set(repository, time);
  }
  return objects.filter((b) => {
    const repository = b.status?.repositoryIndex ?? 1;
    const label = b.status?.label;
    if (b.status?.phase !== 'Completed' || label === undefined || !complete.has(repository) || listed.has(`${repository}/${label}`)) return false;
    const own = labelTime(label);
    return own !== undefined && (newest.get(repository) ?? '') > own;
  });
}

export const isActive = (b: BackupObject): boolean => !b.status?.phase || b.status.phase === 'Pending' || b.status.phase === 'Running';

/** Index (from 1) of the repository a Backup names, or a message naming the field; pure. */
export function repositoryIndex(backup: BackupSpec, requested: string | undefined): number | string {
  if (requested === undefined) return 1;
  const index = backup.repositories.findIndex((r) => r.name === requested);
  if (index < 0)
    return `spec.repository: the cluster has no repository named "${requested}" (spec.backup.repositories: ${backup.repositories.map((r) => r.name).join(', ')})`;
  return index + 1;
}

/** The status fields pgBackRest's listing gives a finished backup; pure. */
export function completedStatus(status: BackupObjectStatus, set: HaBackupSet | undefined, ok: boolean, message: string, at: string): BackupObjectStatus {
  const details: BackupObjectStatus = set
    ? {
        label: set.label,
        ...(set.lsnStart ? { lsnStart: set.lsnStart } : {}),
        ...(set.lsnStop ? { lsnStop: set.lsnStop } : {}),
        ...(set.timeline !== undefined ? { timeline: set.timeline } : {}),
        ...(set.systemIdentifier ? { systemIdentifier: set.systemIdentifier } : {}),
        ...(set.sizeBytes !== undefined ? { sizeBytes: set.sizeBytes } : {}),
        ...(set.repoSizeBytes !== undefined ? { repoSizeBytes: set.repoSizeBytes } : {}),
      }
    : {};
  return { ...status, ...details, phase: ok ? 'Completed' : 'Failed', stoppedAt: set?.stoppedAt ?? at, message: message.slice(0, 1000) };
}

/** What a running Backup's member reports about it: still running, finished, or lost; pure. */
export function followRunning(status: BackupObjectStatus, observed: HaBackupStatus, now: Date): BackupObjectStatus | undefined {
  if (observed.running?.startedAt === status.startedAt) return undefined;
  const last = observed.lastBackup;
  if (last && last.startedAt === status.startedAt) return completedStatus(status, last.set, last.ok, last.message, last.at);
  return {
    ...status,
    phase: 'Failed',
    stoppedAt: now.toISOString(),
    message: `${status.member ?? 'the member'} no longer knows this backup (ha-node restarted while it ran); take another`,
  };
}

async function writeStatus(deps: ReconcileDeps, backup: BackupObject, status: BackupObjectStatus): Promise<void> {
  deps.recordWrite('Backup', 'update');
  await deps.api.replaceBackupStatus({ ...(backup as unknown as RawCluster), status: status as Record<string, unknown> });
}

export interface ObjectsPass {
  /** A Backup of this cluster is pending or running (the caller comes back sooner). */
  active: boolean;
}

/**
 * One pass over the cluster's Backup objects. `member` is where a backup runs now (the primary,
 * or a streaming standby with target prefer-standby); `observe` reads a member's GET /backup.
 */
export async function runBackupObjects(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  objects: BackupObject[],
  pods: V1Pod[],
  member: BackupMember | undefined,
  observe: (host: string) => Promise<HaBackupStatus | undefined>,
  now: Date,
): Promise<ObjectsPass> {
  const backupSpec = cluster.spec.backup!;
  const running = objects.find((b) => b.status?.phase === 'Running');
  if (running) {
    const status = running.status!;
    const pod = pods.find((p) => p.metadata?.name === status.member);
    const host = pod?.status?.podIP;
    const next = !pod
      ? { ...status, phase: 'Failed' as const, stoppedAt: now.toISOString(), message: `${status.member} is gone; take another backup` }
      : host
        ? await observe(host).then((observed) => (observed ? followRunning(status, observed, now) : undefined))
        : undefined;
    if (!next) return { active: true };
    await writeStatus(deps, running, next);
    const type = next.phase === 'Completed' ? 'Normal' : 'Warning';
    await deps.events.record(
      cluster.metadata,
      type,
      next.phase === 'Completed' ? 'BackupCompleted' : 'BackupFailed',
      `Backup ${running.metadata.name}: ${next.phase === 'Completed' ? `${next.label ?? ''} on ${next.member}` : next.message}`,
    );
    return { active: objects.some((b) => b !== running && isActive(b)) };
  }
  const pending = objects.find(isActive);
  if (!pending) return { active: false };
  const repository = repositoryIndex(backupSpec, pending.spec.repository);
  if (typeof repository === 'string') {
    await writeStatus(deps, pending, { phase: 'Failed', message: repository, stoppedAt: now.toISOString() });
    return { active: objects.some((b) => b !== pending && isActive(b)) };
  }
  if (!member) {
    if (pending.status?.phase !== 'Pending') await writeStatus(deps, pending, { phase: 'Pending', message: 'waiting for a member that can take the backup' });
    return { active: true };
  }
  const result = await deps.haNode.startBackup(member.host, pending.spec.type, repository).catch((error: Error) => ({ status: 0, body: error.message }));
  if (result.status === 202) {
    const { startedAt } = JSON.parse(result.body) as { startedAt: string };
    await writeStatus(deps, pending, {
      phase: 'Running',
      startedAt,
      member: member.name,
      repositoryIndex: repository,
      message: `${pending.spec.type} backup running on ${member.name}`,
    });
    await deps.events.record(
      cluster.metadata,
      'Normal',
      'BackupStarted',
      `Backup ${pending.metadata.name}: ${pending.spec.type} backup started on ${member.name}`,
    );
  } else {
    const message = `waiting: ${member.name} answered ${result.status}: ${result.body.trim().slice(0, 300)}`;
    if (pending.status?.phase !== 'Pending' || pending.status.message !== message) await writeStatus(deps, pending, { phase: 'Pending', message });
  }
  return { active: true };
}
