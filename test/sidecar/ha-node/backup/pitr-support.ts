import assert from 'node:assert/strict';
import type { Member, TestCluster } from '../harness.js';
import { backupStatus, takeBackup, type BackupListing } from './support.js';

/**
 * What the point-in-time recovery tests share: backup settings over one posix repository, a
 * source holding batch 1 of `items` under a full backup, and a restore that must be refused.
 */

/** KEELSON_BACKUP for a cluster archiving into `stanza`; with `recovery`, restoring from `sourceStanza`. */
export function posixBackupSettings(repositoryPath: string, sourceStanza: string): (stanza: string, recovery?: Record<string, unknown>) => string {
  const repository = { kind: 'posix', path: repositoryPath };
  return (stanza, recovery) =>
    JSON.stringify({
      stanza,
      repositories: [repository],
      archiveTimeout: 30,
      ...(recovery ? { recovery: { stanza: sourceStanza, repository, ...recovery } } : {}),
    });
}

/** Waits for the source's primary and stanza, writes batch 1 (ids 1–100) and takes a full backup over it. */
export async function sourceWithFirstBatch(source: TestCluster): Promise<{ primary: Member; full: BackupListing }> {
  const primary = await source.waitFor('a primary', () => source.primary(), 120_000);
  await source.waitFor('the stanza ready', async () => (await backupStatus(primary)).stanzaReady, 90_000);
  await primary.query('CREATE TABLE items (id int PRIMARY KEY, batch int)');
  await primary.query('INSERT INTO items SELECT g, 1 FROM generate_series(1, 100) g');
  return { primary, full: await takeBackup(source, primary, 'full') };
}

/** The message of the restore `cluster` (one member) refused, once nothing was promoted; stops the cluster. */
export async function refusedRestore(cluster: TestCluster, timeoutMs: number, nothingPromoted = 'nothing promoted'): Promise<string> {
  try {
    const status = await cluster.waitFor(
      'the restore refused',
      async () => {
        const s = await backupStatus(cluster.members[0]!);
        return s.restore && !s.restore.ok ? s : undefined;
      },
      timeoutMs,
    );
    assert.equal(await cluster.primary(), undefined, nothingPromoted);
    return status.restore!.message;
  } finally {
    await cluster.stop();
  }
}
