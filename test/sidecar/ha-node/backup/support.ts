import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresRunAs } from '../../../support/postgres.js';
import type { Member, TestCluster } from '../harness.js';

/** Shared pieces of the ha-node backup tests: a filesystem repository, API calls, waits. */
export const apiUser = 'patroni';
export const apiPassword = 'backup-secret';
export const authEnv = { KEELSON_API_USERNAME: apiUser, KEELSON_API_PASSWORD: apiPassword };
const authorization = `Basic ${Buffer.from(`${apiUser}:${apiPassword}`).toString('base64')}`;

/** A folder the PostgreSQL account can write: a posix repository. */
export async function posixRepositoryDir(): Promise<{ path: string; remove(): void }> {
  const path = mkdtempSync(join(tmpdir(), 'keelson-repo-'));
  const runAs = await postgresRunAs();
  if (runAs) chownSync(path, runAs.uid, runAs.gid);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface BackupListing {
  stanzaReady: boolean;
  archive?: { ok: boolean; message: string };
  running?: { type: string };
  lastBackup?: { ok: boolean; type: string; message: string; at: string };
  restore?: { ok: boolean; message: string };
  info?: {
    code: number;
    backups: {
      label: string;
      type: string;
      prior?: string;
      repository: number;
      stoppedAt: string;
      timeline?: number;
      systemIdentifier?: string;
      lsnStop?: string;
    }[];
    wal: { repository: number; min?: string; max?: string }[];
  };
  infoError?: string;
}

export async function backupStatus(member: Member): Promise<BackupListing> {
  const response = await member.get('/backup');
  if (response.status !== 200) throw new Error(`GET /backup: ${response.status} ${response.body}`);
  return response.json() as unknown as BackupListing;
}

export async function postBackup(member: Member, body: unknown, auth = true): Promise<{ status: number; text: string }> {
  const response = await fetch(`${member.apiUrl}/backup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, text: await response.text() };
}

/** Starts a backup and waits until it finished (its outcome is newer than the start). */
export async function takeBackup(cluster: TestCluster, primary: Member, type: 'full' | 'diff' | 'incr', repository = 1): Promise<BackupListing> {
  const started = await postBackup(primary, { type, repository });
  if (started.status !== 202) throw new Error(`POST /backup: ${started.status} ${started.text}`);
  const { startedAt } = JSON.parse(started.text) as { startedAt: string };
  const done = await cluster.waitFor(
    `a ${type} backup`,
    async () => {
      const status = await backupStatus(primary);
      return !status.running && status.lastBackup && status.lastBackup.at >= startedAt ? status : undefined;
    },
    90_000,
  );
  if (!done.lastBackup!.ok) throw new Error(`backup failed: ${done.lastBackup!.message}`);
  return done;
}

/** Forces a WAL switch and waits until the primary's archiver has pushed it. */
export async function archiveCurrentWal(cluster: TestCluster, primary: Member): Promise<void> {
  const [{ wal }] = await primary.query<{ wal: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS wal');
  await cluster.waitFor(
    `WAL ${wal} archived`,
    async () => {
      const [row] = await primary.query<{ last: string | null }>('SELECT last_archived_wal AS last FROM pg_stat_archiver');
      return row?.last !== null && row!.last! >= wal!;
    },
    60_000,
  );
}
