/**
 * ha_backup_* metrics from the keeper's state (no pgBackRest call per scrape). WAL archiving
 * progress and failures come from the exporter's pg_archiver collector (pg_stat_archiver).
 */
import type { KeeperStatus } from './keeper.js';

const seconds = (iso: string | undefined): number => (iso ? Date.parse(iso) / 1000 : 0);

export function renderBackupMetrics(status: KeeperStatus, labels: string): string {
  const lines: string[] = [];
  const metric = (name: string, help: string, value: number): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name}${labels} ${value}`);
  };
  metric('ha_backup_stanza_ready', 'Value is 1 once this primary created the stanza and checked WAL archiving into every repository.', status.stanzaReady ? 1 : 0);
  metric('ha_backup_archive_check_failing', 'Value is 1 when the last stanza or archive check failed (repository unreachable, refused credentials).', status.archive && !status.archive.ok ? 1 : 0);
  metric('ha_backup_running', 'Value is 1 while a backup runs on this member.', status.running ? 1 : 0);
  metric('ha_backup_last_success_timestamp_seconds', 'Epoch seconds when the last successful backup started by this member finished (0: none yet).', seconds(status.lastSuccessAt));
  metric('ha_backup_last_failed', 'Value is 1 when the last backup started by this member failed.', status.lastBackup && !status.lastBackup.ok ? 1 : 0);
  return `${lines.join('\n')}\n`;
}
