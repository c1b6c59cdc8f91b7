import { stringify } from 'yaml';
import type { ClusterDocument, ClusterMember } from './discovery.js';
import type { PublishedVolume } from '../sidecar/ha-node/dcs/types.js';
import { nearlyFullRatio } from '../sidecar/ha-node/disk/usage.js';

export type OutputFormat = 'table' | 'json' | 'yaml';

export function parseFormat(value: string | undefined): OutputFormat {
  const format = (value ?? 'table').toLowerCase();
  if (format === 'table' || format === 'pretty') return 'table';
  if (format === 'json' || format === 'yaml') return format;
  throw new Error(`unknown output format "${value}": use table, json or yaml`);
}

/** Data in the requested machine format (tables are rendered by the caller). */
export function machine(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}

/** A bordered text table; every cell is shown as a string. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const format = (cells: string[]): string => `| ${cells.map((c, i) => (c ?? '').padEnd(widths[i]!)).join(' | ')} |`;
  return [line, format(headers), line, ...rows.map(format), line].join('\n') + '\n';
}

function lagText(lag: ClusterMember['lag']): string {
  if (lag === undefined) return '';
  if (typeof lag !== 'number') return String(lag);
  return String(Math.round((lag / 1048576) * 10) / 10);
}

function tagsText(tags: Record<string, unknown> | undefined): string {
  if (!tags || Object.keys(tags).length === 0) return '';
  return Object.entries(tags)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

export const listHeaders = ['Member', 'Host', 'Role', 'State', 'TL', 'Lag in MB', 'Pending restart', 'Tags'];

function memberRow(m: ClusterMember, prefix = ''): string[] {
  const host = m.host ? `${m.host}${m.port ? `:${m.port}` : ''}` : '';
  const role =
    m.role === 'leader'
      ? 'Leader'
      : m.role === 'sync_standby'
        ? 'Sync Standby'
        : m.role === 'quorum_standby'
          ? 'Quorum Standby'
          : m.role === 'standby_leader'
            ? 'Standby Leader'
            : 'Replica';
  return [
    `${prefix}${m.name}`,
    host,
    role,
    m.state,
    m.timeline === undefined ? '' : String(m.timeline),
    m.role === 'leader' ? '' : lagText(m.lag),
    m.pending_restart ? '*' : '',
    tagsText(m.tags),
  ];
}

/** "data 61% of 64 MiB, wal 12% of 1024 MiB". */
function volumesText(volumes: PublishedVolume[] | undefined): string {
  return (volumes ?? [])
    .filter((v) => v.capacity_bytes > 0)
    .map((v) => `${v.volume} ${Math.round((v.used_bytes / v.capacity_bytes) * 100)}% of ${Math.round(v.capacity_bytes / 1024 / 1024)} MiB`)
    .join(', ');
}

/** Volumes at least 90 % used (ha-node's warning threshold), or full. */
function crowdedVolumes(volumes: PublishedVolume[] | undefined): PublishedVolume[] {
  return (volumes ?? []).filter((v) => v.full || (v.capacity_bytes > 0 && v.used_bytes / v.capacity_bytes >= nearlyFullRatio));
}

function footer(cluster: ClusterDocument): string {
  const lines: string[] = [];
  if (cluster.pause) lines.push(' Maintenance mode: on');
  for (const m of cluster.members) for (const e of m.config_errors ?? []) lines.push(` Parameter not applied on ${m.name} (${e.source}): ${e.error}`);
  for (const m of cluster.members)
    for (const v of crowdedVolumes(m.volumes)) lines.push(` Volume ${v.full ? 'full' : 'nearly full'} on ${m.name}: ${volumesText([v])}`);
  if (cluster.scheduled_switchover) {
    const s = cluster.scheduled_switchover;
    lines.push(` Switchover scheduled at: ${s.at}`, `                    from: ${s.from ?? ''}`, `                      to: ${s.to ?? ''}`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** Columns `list --extended` adds: WAL received and replayed by each replica, and its scheduled restart. */
export const extendedHeaders = ['Receive LSN', 'Receive lag in MB', 'Replay LSN', 'Replay lag in MB', 'Scheduled restart', 'Disk used'];

function extendedCells(m: ClusterMember, scheduledRestart: string | undefined): string[] {
  const leader = m.role === 'leader';
  return [
    leader ? '' : (m.receive_lsn ?? ''),
    leader ? '' : lagText(m.receive_lag),
    leader ? '' : (m.replay_lsn ?? ''),
    leader ? '' : lagText(m.replay_lag),
    scheduledRestart ?? '',
    volumesText(m.volumes),
  ];
}

/** `keelson ctl list`: one row per member, sorted by name; `scheduledRestarts` (member → time) makes it extended. */
export function renderList(cluster: ClusterDocument, scope: string, scheduledRestarts?: ReadonlyMap<string, string>): string {
  const members = [...cluster.members].sort((a, b) => a.name.localeCompare(b.name));
  const headers = scheduledRestarts ? [...listHeaders, ...extendedHeaders] : listHeaders;
  const rows = members.map((m) => (scheduledRestarts ? [...memberRow(m), ...extendedCells(m, scheduledRestarts.get(m.name))] : memberRow(m)));
  return `+ Cluster: ${scope}\n${table(headers, rows)}${footer(cluster)}`;
}

/** `keelson ctl topology`: the leader first, every other member indented under it. */
export function renderTopology(cluster: ClusterDocument, scope: string): string {
  const leader = cluster.members.find((m) => m.role === 'leader' || m.role === 'standby_leader');
  const others = cluster.members.filter((m) => m !== leader).sort((a, b) => a.name.localeCompare(b.name));
  const rows = [...(leader ? [memberRow(leader)] : []), ...others.map((m) => memberRow(m, leader ? '+ ' : ''))];
  return `+ Cluster: ${scope}\n${table(listHeaders, rows)}${footer(cluster)}`;
}

export type HistoryRow = [number, number, string, string, string?];

export function renderHistory(history: HistoryRow[]): string {
  return table(
    ['TL', 'LSN', 'Reason', 'Timestamp', 'New Leader'],
    history.map((h) => [String(h[0]), String(h[1]), h[2], h[3], h[4] ?? '']),
  );
}
