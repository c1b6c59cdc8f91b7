import type { PostgresInstance } from '../../postgres/instance.js';
import { parseLsn } from '../../postgres/lsn.js';

/** Parses a timeline history file: "1\t0/3000060\tno recovery target specified" per line. */
export function parseTimelineHistory(text: string): [number, number, string][] {
  const entries: [number, number, string][] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const [tl, lsn, ...reason] = trimmed.split(/\s+/);
    const timeline = Number(tl);
    const position = parseLsn(lsn);
    if (!Number.isInteger(timeline) || position === undefined) continue;
    entries.push([timeline, position, reason.join(' ')]);
  }
  return entries;
}

export async function readTimelineHistory(pg: PostgresInstance, timeline: number): Promise<[number, number, string][]> {
  const file = `pg_wal/${timeline.toString(16).toUpperCase().padStart(8, '0')}.history`;
  const rows = await pg.query<{ content: string }>('SELECT pg_read_file($1) AS content', [file]);
  return parseTimelineHistory(rows[0]?.content ?? '');
}
