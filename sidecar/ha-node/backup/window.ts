/**
 * The restorable window of each repository: from the end of its oldest good backup (the earliest
 * moment a restore can stop at) to the last commit in its newest archived WAL (a target time after
 * that is refused by PostgreSQL: replay ends before reaching it). The newest segments are fetched
 * with `pgbackrest archive-get` and read with `pg_waldump`, walking back until one holds a commit.
 */
import { mkdtempSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool, type RunAs } from '../postgres/runner.js';
import type { PgBackRest } from './engine.js';
import type { StanzaInfo } from './info.js';

export interface WindowEdge {
  time?: string;
  lsn?: string;
}

export interface RepositoryWindow {
  repository: number;
  /** End of the oldest good backup, and its label. */
  earliest?: WindowEdge & { backup: string };
  /** Last commit and last record in the newest archived WAL, and that segment. */
  latest?: WindowEdge & { segment: string };
  /** Why an edge is missing (no backup, no archived WAL, a segment that could not be read). */
  note?: string;
}

/** Segments per 4 GiB "log" file with the default 16 MiB segments (wal_segment_size is not changed). */
const segmentsPerLog = 0x100;
const segmentsSearched = 16;

/** The segment before `segment` on the same timeline (undefined before the first); pure. */
export function previousSegment(segment: string): string | undefined {
  const timeline = segment.slice(0, 8);
  let log = parseInt(segment.slice(8, 16), 16);
  let seg = parseInt(segment.slice(16, 24), 16);
  if (seg > 0) seg -= 1;
  else if (log > 0) [log, seg] = [log - 1, segmentsPerLog - 1];
  else return undefined;
  return `${timeline}${log.toString(16).toUpperCase().padStart(8, '0')}${seg.toString(16).toUpperCase().padStart(8, '0')}`;
}

/** The last record's position and the last commit's time in pg_waldump's output (run with TZ=UTC); pure. */
export function lastRecords(output: string): { lsn?: string; commitTime?: string } {
  let lsn: string | undefined;
  let commitTime: string | undefined;
  for (const line of output.split('\n')) {
    const at = /\blsn: ([0-9A-F]+)\/([0-9A-F]+)/.exec(line);
    // Written as PostgreSQL writes an LSN (no leading zeros), as pgBackRest's listing does.
    if (at) lsn = `${at[1]!.replace(/^0+(?=.)/, '')}/${at[2]!.replace(/^0+(?=.)/, '')}`;
    const commit = /desc: COMMIT (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?) UTC/.exec(line);
    if (commit) commitTime = new Date(`${commit[1]}T${commit[2]}Z`).toISOString();
  }
  return { ...(lsn ? { lsn } : {}), ...(commitTime ? { commitTime } : {}) };
}

/** The oldest good backup's end, per repository; pure. */
export function earliestOf(info: StanzaInfo, repository: number): RepositoryWindow['earliest'] {
  const good = info.backups.filter((b) => b.repository === repository && !b.error).sort((a, b) => (a.stoppedAt < b.stoppedAt ? -1 : 1));
  const first = good[0];
  return first ? { backup: first.label, time: first.stoppedAt, ...(first.lsnStop ? { lsn: first.lsnStop } : {}) } : undefined;
}

export interface WindowTools {
  engine: PgBackRest;
  waldump: string;
  runAs?: RunAs;
}

async function readSegment(tools: WindowTools, repository: number, segment: string, dir: string): Promise<{ lsn?: string; commitTime?: string } | string> {
  const file = join(dir, segment);
  const got = await tools.engine.run(['archive-get', segment, file, `--repo=${repository}`, '--no-archive-async'], { timeoutMs: 60_000 });
  if (got.code !== 0) return `segment ${segment} not fetched (archive-get exit ${got.code})`;
  // pg_waldump ends with an error at the end of the written WAL; the records before it are what counts.
  const dump = await runTool(tools.waldump, [file], { runAs: tools.runAs, env: { TZ: 'UTC' }, timeoutMs: 60_000 });
  rmSync(file, { force: true });
  return lastRecords(dump.output);
}

/** The window of every repository of this cluster's stanza. */
export async function restoreWindow(tools: WindowTools, info: StanzaInfo): Promise<RepositoryWindow[]> {
  const repositories = [
    ...new Set([...info.repositories.map((r) => r.repository), ...info.wal.map((w) => w.repository), ...info.backups.map((b) => b.repository)]),
  ].sort();
  const dir = mkdtempSync(join(tmpdir(), 'keelson-window-'));
  if (tools.runAs) chownSync(dir, tools.runAs.uid, tools.runAs.gid);
  try {
    const windows: RepositoryWindow[] = [];
    for (const repository of repositories) {
      const earliest = earliestOf(info, repository);
      const newest = info.wal.filter((w) => w.repository === repository && w.max).at(-1)?.max;
      const window: RepositoryWindow = { repository, ...(earliest ? { earliest } : {}) };
      if (!earliest) window.note = 'no backup yet: nothing can be restored';
      if (newest) {
        let lsn: string | undefined;
        let segment: string | undefined = newest;
        for (let i = 0; i < segmentsSearched && segment; i += 1, segment = previousSegment(segment)) {
          const read = await readSegment(tools, repository, segment, dir);
          if (typeof read === 'string') {
            window.note = read;
            break;
          }
          lsn ??= read.lsn;
          if (read.commitTime) {
            window.latest = { segment: newest, time: read.commitTime, ...(lsn ? { lsn } : {}) };
            break;
          }
        }
        if (!window.latest && lsn) window.latest = { segment: newest, lsn };
      } else if (earliest) window.note = 'no archived WAL';
      windows.push(window);
    }
    return windows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
