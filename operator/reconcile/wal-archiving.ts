import type { HaBackupStatus } from '../hanode-client.js';
import type { BackupVerdict } from './verdict.js';

/**
 * Condition WalArchiving: whether the primary's completed WAL segments reach the repository.
 * PostgreSQL keeps every segment until it is archived, so an archive that stopped working (an
 * unreachable repository) fills the volume. This condition turns False as soon as segments wait
 * longer than the archive should take — long before the volume is full — while BackupReady
 * speaks of backups as a whole.
 */
export const WalArchivingCondition = 'WalArchiving';

/** Segments may wait this many archiveTimeouts (at least a minute) before archiving counts as stuck. */
const patience = 3;

/** The verdict from the primary's GET /backup; undefined when the primary was not observed. */
export function walArchivingVerdict(observed: HaBackupStatus | undefined, archiveTimeoutSeconds: number): BackupVerdict | undefined {
  if (!observed) return undefined;
  const pending = observed.archivePending;
  const limit = Math.max(60, patience * archiveTimeoutSeconds);
  if (pending && pending.segments > 0 && pending.oldestAgeSeconds > limit) {
    const check = observed.archive && !observed.archive.ok ? ` (last archive check: ${observed.archive.message})` : '';
    return {
      status: 'False',
      reason: 'WalPilingUp',
      message: `${pending.segments} WAL segment(s) wait for the archiver, the oldest for ${Math.round(pending.oldestAgeSeconds)} s: PostgreSQL keeps them on the volume until the repository takes them${check}`,
    };
  }
  if (observed.archive && !observed.archive.ok) return { status: 'False', reason: 'ArchiveCheckFailing', message: observed.archive.message };
  if (!pending) return { status: 'Unknown', reason: 'NotReported', message: 'the primary does not report its archive queue' };
  return {
    status: 'True',
    reason: 'Archiving',
    message:
      pending.segments > 0
        ? `${pending.segments} segment(s) waiting, the oldest for ${Math.round(pending.oldestAgeSeconds)} s`
        : 'no WAL segment waits for the archiver',
  };
}
