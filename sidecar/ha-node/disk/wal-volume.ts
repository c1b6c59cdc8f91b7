/**
 * pg_wal on a volume of its own (spec.walStorage): before the server starts, the data directory's
 * pg_wal must be a symbolic link to the WAL volume's folder. initdb, pg_basebackup and
 * pgBackRest's restore all leave a plain pg_wal directory inside the data directory; this moves
 * its segments to the WAL volume (emptied first: what it held belonged to a data directory that
 * is gone) and links it. One step for every way a data directory comes to be.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type WalPlacement = 'linked' | 'moved' | 'no-data-directory';

export function placeWal(
  dataDir: string,
  walDir: string,
  owner?: { uid: number; gid: number },
  chown?: (path: string, uid: number, gid: number) => void,
): WalPlacement {
  const link = join(dataDir, 'pg_wal');
  if (!existsSync(join(dataDir, 'PG_VERSION'))) return 'no-data-directory';
  const stat = lstatSync(link, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink() && resolve(dataDir, readlinkSync(link)) === resolve(walDir)) return 'linked';
  mkdirSync(walDir, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(walDir)) rmSync(join(walDir, name), { recursive: true, force: true });
  if (stat?.isDirectory()) {
    for (const name of readdirSync(link)) {
      const from = join(link, name);
      try {
        renameSync(from, join(walDir, name));
      } catch {
        // Another filesystem (the usual case): copy, then remove.
        cpSync(from, join(walDir, name), { recursive: true, preserveTimestamps: true });
        rmSync(from, { recursive: true, force: true });
      }
    }
  }
  rmSync(link, { recursive: true, force: true });
  if (owner && chown) {
    chown(walDir, owner.uid, owner.gid);
    for (const name of readdirSync(walDir, { recursive: true }) as string[]) chown(join(walDir, name), owner.uid, owner.gid);
  }
  symlinkSync(walDir, link);
  return 'moved';
}
