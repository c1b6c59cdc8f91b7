/**
 * ha_backup_* metrics from the keeper's state and its last pgBackRest listing (no pgBackRest call
 * per scrape), and the WAL waiting for the archiver, from pg_wal/archive_status. The exporter's
 * pg_archiver collector adds pg_stat_archiver's counts and failures.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StanzaInfo } from './info.js';
import type { KeeperStatus } from './keeper.js';

const seconds = (iso: string | undefined): number => (iso ? Date.parse(iso) / 1000 : 0);

export interface ArchivePending {
  /** Completed WAL segments not yet archived (.ready files). */
  segments: number;
  /** Seconds since the oldest of them was completed (0: none waiting). */
  oldestAgeSeconds: number;
}

/** Reads pg_wal/archive_status: what the archiver has not pushed yet (an empty result when unreadable). */
export function archivePending(dataDir: string, now = Date.now()): ArchivePending {
  const dir = join(dataDir, 'pg_wal', 'archive_status');
  let oldest = now;
  let segments = 0;
  try {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith('.ready')) continue;
      segments += 1;
      oldest = Math.min(oldest, statSync(join(dir, name), { throwIfNoEntry: false })?.mtimeMs ?? now);
    }
  } catch {
    return { segments: 0, oldestAgeSeconds: 0 };
  }
  return { segments, oldestAgeSeconds: segments > 0 ? Math.max(0, (now - oldest) / 1000) : 0 };
}

export interface BackupMetricsInput {
  status: KeeperStatus;
  info?: StanzaInfo;
  pending: ArchivePending;
  archiveTimeout: number;
}

export function renderBackupMetrics(input: BackupMetricsInput, labels: string): string {
  const { status, info, pending } = input;
  const lines: string[] = [];
  const family = (name: string, help: string, samples: [string, number][]): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...samples.map(([l, v]) => `${name}${l} ${v}`));
  };
  const metric = (name: string, help: string, value: number): void => family(name, help, [[labels, value]]);
  const withRepository = (repository: number): string => labels.replace(/}$/, `,repository="${repository}"}`);
  metric(
    'ha_backup_stanza_ready',
    'Value is 1 once this primary created the stanza and checked WAL archiving into every repository.',
    status.stanzaReady ? 1 : 0,
  );
  metric(
    'ha_backup_archive_check_failing',
    'Value is 1 when the last stanza or archive check failed (repository unreachable, refused credentials).',
    status.archive && !status.archive.ok ? 1 : 0,
  );
  metric('ha_backup_running', 'Value is 1 while a backup runs on this member.', status.running ? 1 : 0);
  metric(
    'ha_backup_last_success_timestamp_seconds',
    'Epoch seconds when the last successful backup started by this member finished (0: none yet).',
    seconds(status.lastSuccessAt),
  );
  metric('ha_backup_last_failed', 'Value is 1 when the last backup started by this member failed.', status.lastBackup && !status.lastBackup.ok ? 1 : 0);
  metric('ha_backup_archive_timeout_seconds', 'archive_timeout: the longest a quiet primary holds WAL back from the archive.', input.archiveTimeout);
  metric('ha_backup_archive_pending_segments', 'Completed WAL segments waiting for the archiver on this member.', pending.segments);
  metric(
    'ha_backup_archive_pending_age_seconds',
    'Seconds since the oldest WAL segment still waiting for the archiver was completed (0: none waiting): the archive lag.',
    pending.oldestAgeSeconds,
  );
  if (!info) return `${lines.join('\n')}\n`;
  // Per repository, from the last listing: the newest good backup and the start of the restorable window.
  const repositories = [...new Set(info.backups.map((b) => b.repository))].sort();
  const newest = repositories.map((r) => [r, info.backups.filter((b) => b.repository === r && !b.error).at(-1)] as const).filter(([, b]) => b !== undefined);
  const oldest = repositories.map(
    (r) =>
      [
        r,
        info.backups
          .filter((b) => b.repository === r && !b.error)
          .map((b) => b.stoppedAt)
          .sort()[0],
      ] as const,
  );
  family(
    'ha_backup_newest_timestamp_seconds',
    'Epoch seconds when the newest good backup in the repository finished.',
    newest.map(([r, b]) => [withRepository(r), seconds(b!.stoppedAt)]),
  );
  family(
    'ha_backup_newest_duration_seconds',
    'How long the newest good backup in the repository took.',
    newest.map(([r, b]) => [withRepository(r), seconds(b!.stoppedAt) - seconds(b!.startedAt)]),
  );
  family(
    'ha_backup_newest_size_bytes',
    'Database size the newest good backup in the repository holds.',
    newest.map(([r, b]) => [withRepository(r), b!.sizeBytes ?? 0]),
  );
  family(
    'ha_backup_newest_repo_size_bytes',
    'What the newest good backup added to the repository.',
    newest.map(([r, b]) => [withRepository(r), b!.repoSizeBytes ?? 0]),
  );
  family(
    'ha_backup_restorable_since_timestamp_seconds',
    'Start of the restorable window: epoch seconds when the oldest good backup in the repository finished.',
    oldest.filter(([, t]) => t).map(([r, t]) => [withRepository(r), seconds(t)]),
  );
  family(
    'ha_backup_count',
    'Good backups in the repository.',
    repositories.map((r) => [withRepository(r), info.backups.filter((b) => b.repository === r && !b.error).length]),
  );
  return `${lines.join('\n')}\n`;
}
