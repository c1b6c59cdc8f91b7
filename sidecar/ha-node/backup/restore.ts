/**
 * Bootstrap of a NEW cluster from a repository (instead of initdb): checks, pgbackrest restore,
 * WAL replay from the source's archive to the target, promotion onto a new timeline. The restored
 * cluster archives into its OWN stanza from its first WAL on; the source is only ever read.
 */
import { join } from 'node:path';
import { chownSync, mkdirSync } from 'node:fs';
import type { Logger } from '../../../lib/log.js';
import type { PostgresInstance } from '../postgres/instance.js';
import { serverLogLinesSince, serverLogSize } from '../postgres/server-log.js';
import { writePrivateFile } from '../postgres/runner.js';
import type { StreamingAddress } from '../postgres/source-identity.js';
import type { PgBackRest } from './engine.js';
import type { StanzaInfo } from './info.js';
import type { RecoveryConfig } from '../../../api/ha-node/backup-settings.js';
import { streamingSourceProblem } from './source-system.js';

/** A restore refused before anything was written (wrong target, no backup, archive in use). */
export class RestoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefused';
  }
}

/**
 * What must hold before restoring: the source has a usable backup for the target, and this
 * cluster's own stanza holds nothing (two clusters must never archive into one stanza).
 */
export function restoreProblem(source: StanzaInfo, own: StanzaInfo, recovery: RecoveryConfig): string | undefined {
  if (own.code !== 1 && (own.backups.length > 0 || own.wal.some((w) => w.max))) {
    return `the cluster's own archive (stanza ${own.stanza}) is not empty: a restored cluster must archive into a new stanza or path`;
  }
  if (source.code === 1) return `recovery.stanza: no stanza ${source.stanza} in the source repository`;
  const usable = source.backups.filter((b) => !b.error);
  if (usable.length === 0) return `recovery: the source stanza ${source.stanza} has no backup`;
  const { time, lsn, backup } = recovery.target;
  if (backup && !usable.some((b) => b.label === backup)) return `recovery.target.backup: no backup ${backup} in stanza ${source.stanza}`;
  if (lsn) {
    const stops = usable.flatMap((b) => (b.lsnStop ? [b.lsnStop] : [])).sort((a, b) => lsnCompare(a, b));
    const chosen = backup ? usable.find((b) => b.label === backup)?.lsnStop : stops[0];
    if (chosen && lsnCompare(lsn, chosen) < 0)
      return `recovery.target.lsn: ${lsn} is before the end of ${backup ? `backup ${backup}` : 'the first backup'} (${chosen}); the earliest restorable LSN is ${chosen}`;
  }
  if (time) {
    const first = usable.map((b) => b.stoppedAt).sort()[0]!;
    if (Date.parse(time) < Date.parse(first))
      return `recovery.target.time: ${time} is before the end of the first backup (${first}); the earliest restorable time is ${first}`;
    if (backup) {
      const chosen = usable.find((b) => b.label === backup)!;
      if (Date.parse(time) < Date.parse(chosen.stoppedAt)) return `recovery.target.time: ${time} is before the end of backup ${backup} (${chosen.stoppedAt})`;
    }
  }
  const chosen = usable.find((b) => b.label === backupForTarget(source, recovery));
  if (chosen?.walStart && !walArchived(source, chosen.repository, chosen.walStart)) {
    return `recovery: the first WAL segment of backup ${chosen.label} (${chosen.walStart}) is not in the source archive`;
  }
  return undefined;
}

/** Whether a segment lies in the archived range of a repository (names order as their positions do). */
function walArchived(info: StanzaInfo, repository: number, segment: string): boolean {
  return info.wal.some(
    (w) =>
      w.repository === repository && w.min !== undefined && w.max !== undefined && w.min.slice(8) <= segment.slice(8) && segment.slice(8) <= w.max.slice(8),
  );
}

/** Orders two WAL positions ("16/B374D848"); pure. */
export function lsnCompare(a: string, b: string): number {
  const value = (lsn: string): bigint => {
    const [high, low] = lsn.split('/') as [string, string];
    return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
  };
  const d = value(a) - value(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * The backup a restore starts from: the named one, else the newest that ended before a time or
 * LSN target (pgBackRest picks likewise by time), else the newest. A restore point or xid cannot
 * be placed from the listing: name the backup when the target lies before the newest one.
 */
export function backupForTarget(source: StanzaInfo, recovery: RecoveryConfig): string | undefined {
  const { backup, time, lsn } = recovery.target;
  if (backup) return backup;
  const usable = source.backups.filter((b) => !b.error);
  const before = time
    ? usable.filter((b) => Date.parse(b.stoppedAt) <= Date.parse(time))
    : lsn
      ? usable.filter((b) => b.lsnStop !== undefined && lsnCompare(b.lsnStop, lsn) <= 0)
      : usable;
  return before.sort((a, b) => a.stoppedAt.localeCompare(b.stoppedAt)).at(-1)?.label;
}

/** The target kind a recovery names, for messages ("time", "lsn", ...; "latest" for the end of the archive). */
export function targetKind(recovery: Pick<RecoveryConfig, 'target'>): 'time' | 'lsn' | 'name' | 'xid' | 'immediate' | 'latest' {
  const t = recovery.target;
  return t.time ? 'time' : t.lsn ? 'lsn' : t.name ? 'name' : t.xid ? 'xid' : t.immediate ? 'immediate' : 'latest';
}

/**
 * An ISO 8601 time as recovery_target_time takes it: the server checks it before loading the
 * time zone abbreviations, so "Z" is refused there; a numeric offset is not.
 */
export function postgresTime(iso: string): string {
  return iso.replace('T', ' ').replace(/[zZ]$/, '+00');
}

/**
 * Whether the replay fetches WAL ahead (asynchronous archive-get): not for `immediate`, which
 * replays only the backup's own few segments; pure.
 */
export function replayPrefetch(recovery: Pick<RecoveryConfig, 'target'>): boolean {
  return targetKind(recovery) !== 'immediate';
}

/** postgresql.conf settings for the replay: the source's archive, the target, promote at the end. */
export function recoveryParameters(restoreCommand: string, recovery: Pick<RecoveryConfig, 'target'>): Record<string, string> {
  const parameters: Record<string, string> = { restore_command: restoreCommand, recovery_target_action: 'promote' };
  const { time, lsn, name, xid, immediate, exclusive } = recovery.target;
  if (time) parameters.recovery_target_time = postgresTime(time);
  if (lsn) parameters.recovery_target_lsn = lsn;
  if (name) parameters.recovery_target_name = name;
  if (xid) parameters.recovery_target_xid = xid;
  if (immediate) parameters.recovery_target = 'immediate';
  // A time stops before it unless told otherwise (what was committed at that instant is after it).
  if (time || lsn || xid) parameters.recovery_target_inclusive = (exclusive ?? Boolean(time)) ? 'false' : 'true';
  return parameters;
}

const logPath = (pg: PostgresInstance): string => join(pg.settings.dataDir, '..', 'postgresql.log');

/** The server's errors and replay landmarks since `from` (this attempt only: the log file is shared by every start). */
function logTail(pg: PostgresInstance, from: number): string {
  return serverLogLinesSince(logPath(pg), from, /FATAL|PANIC|ERROR|last completed transaction was at log time|redo done at/).join('\n');
}

/**
 * The first part of both endings: checks the source (stanza, a usable backup, its first WAL in the
 * archive; for a standby that also streams, the same database system as the streaming source) and
 * this cluster's own empty stanza, then restores the chosen backup into an empty data
 * directory. Leaves the source's configuration (source.conf) in place for the replay.
 */
export async function restoreSourceBackup(pg: PostgresInstance, engine: PgBackRest, logger: Logger, streaming?: StreamingAddress): Promise<string | undefined> {
  const recovery = engine.config.recovery!;
  engine.writeConfig();
  engine.writeSourceConfig();
  const [source, own] = await Promise.all([engine.info({ source: true }), engine.info()]);
  const problem = restoreProblem(source, own, recovery);
  if (problem) throw new RestoreRefused(problem);
  const label = backupForTarget(source, recovery);
  const mismatch = streaming ? await streamingSourceProblem(pg, streaming, source, label, logger) : undefined;
  if (mismatch) throw new RestoreRefused(mismatch);
  logger.info(
    { source: recovery.stanza, backup: label, target: targetKind(recovery), standby: recovery.standby === true, ...recovery.target },
    'restoring from the repository',
  );
  pg.prepareDirectories();
  pg.removeDataDirectory();
  mkdirSync(pg.settings.dataDir, { mode: 0o700 });
  if (pg.settings.runAs) chownSync(pg.settings.dataDir, pg.settings.runAs.uid, pg.settings.runAs.gid);
  await pg.whileCreating(() => engine.restore(label));
  return label;
}

/**
 * Restores, replays and promotes; returns with PostgreSQL running as a primary. On error the data
 * directory is left for the caller to remove (the bootstrap gives the initialize key back).
 */
export async function restoreFromRepository(pg: PostgresInstance, engine: PgBackRest, logger: Logger, timeoutMs = 6 * 3600_000): Promise<void> {
  const recovery = engine.config.recovery!;
  await restoreSourceBackup(pg, engine, logger);
  const kept = pg.enforcedParameters;
  pg.configure({ enforced: { ...kept, ...recoveryParameters(engine.restoreCommand({ source: true, prefetch: replayPrefetch(recovery) }), recovery) } });
  pg.writeConfig(undefined, false);
  writePrivateFile(join(pg.settings.dataDir, 'recovery.signal'), '', pg.settings.runAs);
  const logFrom = serverLogSize(logPath(pg));
  try {
    await pg.start(120);
    await waitForPromotion(pg, timeoutMs, logFrom, targetKind(recovery));
  } finally {
    pg.configure({ enforced: kept });
  }
  // Back to this cluster's own settings: restore_command reads its own stanza from now on.
  pg.writeConfig(undefined, false);
  await pg.reload();
  engine.removeSourceConfig();
}

/**
 * Why replay stopped, from the server's log. A target beyond the end of the archive is refused by
 * the server (it does not promote at the end); the message then gives the last restorable time.
 */
export function recoveryFailure(tail: string, kind: string = 'time'): string {
  if (/recovery ended before configured recovery target was reached/.test(tail)) {
    const last = /last completed transaction was at log time (.+)$/m.exec(tail)?.[1]?.trim();
    const what = kind === 'name' ? 'the restore point is not in the archive (or lies before the backup restored)' : 'beyond the end of the archive';
    const redo = /redo done at ([0-9A-F]+\/[0-9A-F]+)/.exec(tail)?.[1];
    return `recovery.target.${kind}: ${what}${last ? `; the last restorable time is ${last}` : ''}${redo ? ` (WAL replayed up to ${redo})` : ''}`;
  }
  return `recovery stopped before promotion: ${tail.replace(/\n/g, ' | ') || 'see postgresql.log'}`;
}

async function waitForPromotion(pg: PostgresInstance, timeoutMs: number, logFrom: number, kind: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const postmaster = pg.postmasterPid();
  // Replay may take long: liveness counts the running postmaster as a tool making progress.
  pg.activity.started(postmaster);
  try {
    for (;;) {
      if (!pg.isRunning()) {
        pg.markFailed('start_failed');
        throw new Error(recoveryFailure(logTail(pg, logFrom), kind));
      }
      const rows = await pg.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r').catch(() => undefined);
      if (rows?.[0]?.r === false) return;
      if (Date.now() > deadline) throw new Error('recovery did not reach its target in time');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    pg.activity.finished(postmaster);
  }
}
