/** Parses `pgbackrest info --output=json` into the backup list ha-node serves (GET /backup). */
import { z } from 'zod';

const backupEntry = z.object({
  label: z.string(),
  type: z.enum(['full', 'diff', 'incr']),
  prior: z.string().nullable().optional(),
  error: z.boolean().optional(),
  archive: z.object({ start: z.string().nullable().optional(), stop: z.string().nullable().optional() }).optional(),
  database: z.object({ id: z.number(), 'repo-key': z.number() }),
  info: z.object({ size: z.number().optional(), repository: z.object({ size: z.number().optional(), delta: z.number().optional() }).optional() }).optional(),
  lsn: z.object({ start: z.string(), stop: z.string() }).optional(),
  timestamp: z.object({ start: z.number(), stop: z.number() }),
});

const stanzaEntry = z.object({
  name: z.string(),
  status: z.object({ code: z.number(), message: z.string() }),
  archive: z
    .array(
      z.object({
        id: z.string(),
        min: z.string().nullable().optional(),
        max: z.string().nullable().optional(),
        database: z.object({ 'repo-key': z.number() }),
      }),
    )
    .default([]),
  backup: z.array(backupEntry).default([]),
  db: z
    .array(z.object({ id: z.number(), 'repo-key': z.number(), 'system-id': z.union([z.string().regex(/^\d+$/), z.number()]), version: z.string() }))
    .default([]),
  repo: z.array(z.object({ key: z.number(), status: z.object({ code: z.number(), message: z.string() }) })).default([]),
});

export interface BackupSet {
  label: string;
  type: 'full' | 'diff' | 'incr';
  /** The backup this one depends on (diff/incr). */
  prior?: string;
  repository: number;
  startedAt: string;
  stoppedAt: string;
  lsnStart?: string;
  lsnStop?: string;
  /** First and last WAL segment the backup needs; the timeline is the first 8 hex digits. */
  walStart?: string;
  walStop?: string;
  timeline?: number;
  systemIdentifier?: string;
  sizeBytes?: number;
  repoSizeBytes?: number;
  error: boolean;
}

export interface WalRange {
  repository: number;
  id: string;
  min?: string;
  max?: string;
}

export interface StanzaInfo {
  stanza: string;
  /** pgBackRest's status: 0 ok, 1 missing stanza path, 2 no valid backups, 3 missing stanza data, ... */
  code: number;
  message: string;
  backups: BackupSet[];
  wal: WalRange[];
  repositories: { repository: number; code: number; message: string }[];
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** Throws when the text is not the JSON shape pgBackRest prints (the message says where). */
export function parseInfo(text: string, stanza: string): StanzaInfo {
  // A system identifier is a 64-bit integer: read as a JSON number it would lose its last digits.
  const exact = text.replace(/("system-id"\s*:\s*)(\d+)/g, '$1"$2"');
  const parsed = z.array(stanzaEntry).safeParse(JSON.parse(exact));
  if (!parsed.success) throw new Error(`unexpected pgbackrest info output: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`);
  const entry = parsed.data.find((s) => s.name === stanza);
  if (!entry) return { stanza, code: 1, message: 'missing stanza', backups: [], wal: [], repositories: [] };
  const systemIds = new Map(entry.db.map((d) => [`${d['repo-key']}:${d.id}`, String(d['system-id'])]));
  const backups = entry.backup.map((b): BackupSet => {
    const walStart = b.archive?.start ?? undefined;
    return {
      label: b.label,
      type: b.type,
      ...(b.prior ? { prior: b.prior } : {}),
      repository: b.database['repo-key'],
      startedAt: iso(b.timestamp.start),
      stoppedAt: iso(b.timestamp.stop),
      lsnStart: b.lsn?.start,
      lsnStop: b.lsn?.stop,
      walStart,
      walStop: b.archive?.stop ?? undefined,
      timeline: walStart ? parseInt(walStart.slice(0, 8), 16) : undefined,
      systemIdentifier: systemIds.get(`${b.database['repo-key']}:${b.database.id}`),
      sizeBytes: b.info?.size,
      repoSizeBytes: b.info?.repository?.delta,
      error: b.error ?? false,
    };
  });
  return {
    stanza,
    code: entry.status.code,
    message: entry.status.message,
    backups,
    wal: entry.archive.map((a) => ({ repository: a.database['repo-key'], id: a.id, min: a.min ?? undefined, max: a.max ?? undefined })),
    repositories: entry.repo.map((r) => ({ repository: r.key, code: r.status.code, message: r.status.message })),
  };
}

/** The earliest moment a restore can reach: the end of the oldest good backup (undefined: none). */
export function restorableFrom(info: StanzaInfo): string | undefined {
  const stops = info.backups
    .filter((b) => !b.error)
    .map((b) => b.stoppedAt)
    .sort();
  return stops[0];
}

/** The first set of a repository that started at or after a moment (pgBackRest keeps whole seconds). */
export function setStartedSince(info: StanzaInfo, repository: number, since: string): BackupSet | undefined {
  const floor = Math.floor(Date.parse(since) / 1000) * 1000;
  return info.backups.find((b) => b.repository === repository && Date.parse(b.startedAt) >= floor);
}
