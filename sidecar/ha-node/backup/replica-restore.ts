/**
 * A new replica from the cluster's own newest backup plus the archive (pgbackrest restore
 * --type=standby) instead of a pg_basebackup copy of the primary: the primary only serves the WAL
 * written since that backup, streamed once the archive is replayed. Any failure falls back to
 * pg_basebackup, so a repository problem never keeps a member from joining.
 */
import { chownSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import type { Logger } from '../../../lib/log.js';
import type { LeaderAddress, PostgresInstance } from '../postgres/instance.js';
import type { PgBackRest } from './engine.js';
import { errorSummary } from './engine.js';
import type { StanzaInfo } from './info.js';
import { cloneFrom } from '../postgres/clone.js';

/** The newest good backup of the cluster's own stanza (any repository), or undefined; pure. */
export function newestBackup(info: StanzaInfo): { label: string; repository: number } | undefined {
  const good = info.backups.filter((b) => !b.error).sort((a, b) => a.stoppedAt.localeCompare(b.stoppedAt));
  const newest = good.at(-1);
  return newest ? { label: newest.label, repository: newest.repository } : undefined;
}

/** Restores the newest backup into a side folder and swaps it in; the label, or undefined when there is none. */
export async function restoreReplica(pg: PostgresInstance, engine: PgBackRest): Promise<string | undefined> {
  engine.writeConfig();
  const newest = newestBackup(await engine.info());
  if (!newest) return undefined;
  const target = `${pg.settings.dataDir}.clone`;
  pg.prepareDirectories();
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { mode: 0o700 });
  if (pg.settings.runAs) chownSync(target, pg.settings.runAs.uid, pg.settings.runAs.gid);
  await pg.whileCreating(async () => {
    const result = await engine.run(['restore', '--type=standby', `--pg1-path=${target}`, `--set=${newest.label}`, `--repo=${newest.repository}`], {
      timeoutMs: 6 * 3600_000,
    });
    if (result.code !== 0) {
      rmSync(target, { recursive: true, force: true });
      throw new Error(`pgbackrest restore failed (exit ${result.code}): ${errorSummary(result.output)}`);
    }
    pg.removeDataDirectory();
    renameSync(target, pg.settings.dataDir);
  });
  return newest.label;
}

/** Builds the replica's data directory: from the repository when it has a backup, else (or on failure) from the leader. */
export async function cloneReplica(pg: PostgresInstance, engine: PgBackRest | undefined, leader: LeaderAddress, logger: Logger): Promise<string> {
  if (engine) {
    try {
      const label = await restoreReplica(pg, engine);
      if (label) return `backup ${label} and the archive`;
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'building the replica from the repository failed; cloning the leader instead');
    }
  }
  await cloneFrom(pg, leader);
  return leader.name;
}
