import { renameSync, rmSync } from 'node:fs';
import { connInfo } from './conf.js';
import { peerConnectionTls } from './peer-tls.js';
import type { LeaderAddress, PostgresInstance } from './instance.js';
import { runToolOrThrow } from './runner.js';

/**
 * Clones the leader with pg_basebackup into a side folder and swaps it in only when the copy
 * is complete, so a failed clone never costs the data directory we had.
 */
export async function cloneFrom(db: PostgresInstance, from: LeaderAddress): Promise<void> {
  const { settings } = db;
  db.prepareDirectories();
  const target = `${settings.dataDir}.clone`;
  const conn = connInfo({
    host: from.host,
    port: from.port,
    user: settings.replication.username,
    password: settings.replication.password,
    // Its own name in pg_stat_replication: a copy in progress is not a standby streaming from the primary.
    applicationName: `${settings.name}-clone`,
    tls: peerConnectionTls(settings.peerTls, from),
  });
  await db.whileCreating(async () => {
    rmSync(target, { recursive: true, force: true });
    try {
      await runToolOrThrow(db.tool('pg_basebackup'), ['-D', target, '-d', conn, '-X', 'stream', '-c', 'fast', '--no-sync'], {
        runAs: db.runAs,
        activity: db.activity,
        timeoutMs: 600_000,
      });
    } catch (error) {
      rmSync(target, { recursive: true, force: true });
      throw error;
    }
    rmSync(settings.dataDir, { recursive: true, force: true });
    renameSync(target, settings.dataDir);
  });
}
