/** `keelson ctl backup`, `backups` and `restore-window`: start a backup on the leader, list what the repository holds and what it can restore. */
import type { BackupSet, StanzaInfo } from '../sidecar/ha-node/backup/info.js';
import type { RepositoryWindow } from '../sidecar/ha-node/backup/window.js';
import { restorableFrom } from '../sidecar/ha-node/backup/info.js';
import { apiBase, callMember, jsonOf, OperationError } from './client.js';
import { leaderOf, memberBases, readCluster } from './discovery.js';
import { machine, table } from './render.js';
import { CtlExit, UsageError, type CtlContext } from './actions.js';

async function leaderBase(ctx: CtlContext): Promise<string> {
  const { cluster } = await readCluster(await memberBases(ctx.target, ctx.client.names), ctx.client);
  const leader = leaderOf(cluster);
  if (!leader) throw new OperationError(0, 'This cluster has no leader; backups run on the primary');
  return apiBase(leader.api_url);
}

export async function backupCommand(ctx: CtlContext, type: string): Promise<number> {
  if (!['full', 'diff', 'incr'].includes(type)) throw new UsageError('--type must be full, diff or incr');
  const reply = await callMember(await leaderBase(ctx), 'POST', '/backup', { type }, ctx.client);
  if (reply.status !== 202) throw new OperationError(reply.status, reply.text);
  ctx.out(ctx.format === 'table' ? `${type} backup started\n` : machine(JSON.parse(reply.text) as unknown, ctx.format));
  return CtlExit.ok;
}

function size(bytes: number | undefined): string {
  if (bytes === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) [value, unit] = [value / 1024, unit + 1];
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** The backup table and the restorable window (end of the first good backup to the newest WAL). */
export function renderBackups(info: StanzaInfo): string {
  const rows = info.backups.map((b: BackupSet) => [
    b.label,
    b.type,
    String(b.repository),
    b.startedAt,
    b.stoppedAt,
    `${b.walStart ?? ''}..${b.walStop ?? ''}`,
    size(b.sizeBytes),
    size(b.repoSizeBytes),
    b.error ? 'error' : 'ok',
  ]);
  const from = restorableFrom(info);
  const wal = info.wal
    .filter((w) => w.max)
    .map((w) => `repo${w.repository} ${w.min}..${w.max}`)
    .join(', ');
  return `${table(['Label', 'Type', 'Repo', 'Started', 'Stopped', 'WAL', 'Size', 'Stored', 'State'], rows)}Restorable from ${from ?? 'nowhere yet (no backup)'}${wal ? `; archived WAL ${wal}` : ''}\n`;
}

export async function backupsCommand(ctx: CtlContext): Promise<number> {
  const status = jsonOf<{ info?: StanzaInfo; infoError?: string }>(
    await callMember(await leaderBase(ctx), 'GET', '/backup', undefined, ctx.client),
    'GET /backup',
  );
  if (!status.info) throw new OperationError(0, `pgbackrest info failed: ${status.infoError ?? 'no answer'}`);
  ctx.out(ctx.format === 'table' ? renderBackups(status.info) : machine(status.info, ctx.format));
  return CtlExit.ok;
}

/** One row per repository: where a restore can stop, earliest and latest. */
export function renderRestoreWindow(windows: RepositoryWindow[]): string {
  const rows = windows.map((w) => [
    String(w.repository),
    w.earliest?.time ?? '',
    w.earliest?.lsn ?? '',
    w.earliest?.backup ?? '',
    w.latest?.time ?? '',
    w.latest?.lsn ?? '',
    w.note ?? '',
  ]);
  return table(['Repo', 'Earliest time', 'Earliest LSN', 'Backup', 'Latest time', 'Latest LSN', 'Note'], rows);
}

export async function restoreWindowCommand(ctx: CtlContext): Promise<number> {
  const reply = jsonOf<{ stanza: string; repositories: RepositoryWindow[] }>(
    await callMember(await leaderBase(ctx), 'GET', '/backup/window', undefined, ctx.client),
    'GET /backup/window',
  );
  ctx.out(ctx.format === 'table' ? renderRestoreWindow(reply.repositories) : machine(reply, ctx.format));
  return CtlExit.ok;
}
