import { z } from 'zod';

/**
 * The REST answers of ha-node that other programs read: the operator (operator/hanode-client.ts)
 * and `keelson ctl`. ha-node builds them (sidecar/ha-node/api/), the readers parse them with these
 * schemas. Objects are loose: a reader sees the fields it knows, ha-node may answer more.
 */

/** What ha-node records when it demotes a primary into a standby leader (standby_demotion). */
export const demotionSchema = z.looseObject({
  database_system_identifier: z.string().optional(),
  system_identifier: z.string().optional(),
  timeline: z.number(),
  checkpoint_location: z.number(),
  checkpoint_lsn: z.string(),
  at: z.string(),
});

/** A byte lag, or "unknown" when the member published no position. */
const lag = z.union([z.number(), z.string()]);

/** Usage of one of a member's volumes as its record publishes it (used bytes rounded up to 1 % of the capacity). */
export const publishedVolumeSchema = z.object({
  volume: z.enum(['data', 'wal']),
  capacity_bytes: z.number(),
  used_bytes: z.number(),
  free_bytes: z.number(),
  full: z.literal(true).optional(),
});

/** One member of GET /cluster. ha-node always sends state and api_url; the operator reads neither. */
export const clusterMemberSchema = z.looseObject({
  name: z.string(),
  role: z.string(),
  state: z.string().optional(),
  api_url: z.string().optional(),
  /** The address the member's ha-node published (its pod's IP when it wrote the record). */
  host: z.string().optional(),
  port: z.number().optional(),
  timeline: z.number().optional(),
  lag: lag.optional(),
  lsn: z.string().optional(),
  receive_lag: lag.optional(),
  receive_lsn: z.string().optional(),
  replay_lag: lag.optional(),
  replay_lsn: z.string().optional(),
  system_identifier: z.string().optional(),
  /** The member reported a parameter change that needs a restart. */
  pending_restart: z.boolean().optional(),
  /** Parameter values the member keeps out of postgresql.conf or its server could not apply. */
  config_errors: z.array(z.looseObject({ parameter: z.string().optional(), source: z.string(), error: z.string() })).optional(),
  tags: z.record(z.string(), z.unknown()).optional(),
  /** Standby leader: the source's timeline and the bytes its replay is behind the source's WAL end. */
  source_timeline: z.number().optional(),
  source_lsn: z.string().optional(),
  source_lag: z.number().optional(),
  standby_demotion: demotionSchema.optional(),
  volumes: z.array(publishedVolumeSchema).optional(),
});

/** GET /cluster. */
export const clusterDocumentSchema = z.looseObject({
  members: z.array(clusterMemberSchema),
  scope: z.string().optional(),
  pause: z.boolean().optional(),
  scheduled_switchover: z.looseObject({ at: z.string(), from: z.string().optional(), to: z.string().optional() }).optional(),
});

/** GET /cluster as `keelson ctl` reads it: every member with its state and API address. */
export const ctlClusterDocumentSchema = clusterDocumentSchema.extend({ members: z.array(clusterMemberSchema.required({ state: true, api_url: true })) });

/** GET / (the node document), as far as other programs read it. */
export const nodeDocumentSchema = z.looseObject({
  role: z.string().optional(),
  state: z.string().optional(),
  pending_restart: z.boolean().optional(),
  timeline: z.number().optional(),
  xlog: z.looseObject({ location: z.number().optional(), replayed_location: z.number().optional(), received_location: z.number().optional() }).optional(),
  standby_demotion: demotionSchema.optional(),
});

/** One pooler as a member lists it (GET /poolers); `readOnly` for the read-only pooler's. */
export const poolerListingSchema = z.looseObject({
  answered: z.boolean(),
  paused: z.boolean().optional(),
  reachable: z.boolean().optional(),
  readOnly: z.boolean().optional(),
  target: z.looseObject({ host: z.string(), port: z.number() }).optional(),
});

export const poolersDocumentSchema = z.looseObject({ poolers: z.array(poolerListingSchema) });

/** One backup set of GET /backup. */
export const backupSetSchema = z.looseObject({
  label: z.string(),
  type: z.string(),
  repository: z.number().optional(),
  startedAt: z.string().optional(),
  stoppedAt: z.string(),
  lsnStart: z.string().optional(),
  lsnStop: z.string().optional(),
  timeline: z.number().optional(),
  systemIdentifier: z.string().optional(),
  sizeBytes: z.number().optional(),
  repoSizeBytes: z.number().optional(),
  error: z.boolean().optional(),
});

const outcome = z.looseObject({ ok: z.boolean(), message: z.string(), at: z.string() });

/** GET /backup (sidecar/ha-node/backup/keeper.ts), as far as the operator reads it. */
export const backupStatusSchema = z.looseObject({
  stanzaReady: z.boolean().optional(),
  archive: outcome.optional(),
  /** Completed WAL segments waiting for the archiver (while the server runs). */
  archivePending: z.looseObject({ segments: z.number(), oldestAgeSeconds: z.number() }).optional(),
  running: z.looseObject({ type: z.string(), startedAt: z.string() }).optional(),
  lastBackup: outcome.extend({ type: z.string(), startedAt: z.string().optional(), set: backupSetSchema.optional() }).optional(),
  restore: outcome.optional(),
  info: z
    .looseObject({
      backups: z.array(backupSetSchema).optional(),
      repositories: z.array(z.looseObject({ repository: z.number(), code: z.number(), message: z.string() })).optional(),
    })
    .optional(),
  infoError: z.string().optional(),
});

export type ClusterMember = z.infer<typeof clusterMemberSchema>;
export type PublishedVolumeUsage = z.infer<typeof publishedVolumeSchema>;
export type ClusterDocument = z.infer<typeof clusterDocumentSchema>;
export type CtlClusterDocument = z.infer<typeof ctlClusterDocumentSchema>;
export type NodeDocument = z.infer<typeof nodeDocumentSchema>;
export type PoolerListing = z.infer<typeof poolerListingSchema>;
export type BackupSet = z.infer<typeof backupSetSchema>;
export type BackupStatus = z.infer<typeof backupStatusSchema>;
export type Demotion = z.infer<typeof demotionSchema>;

/** Checks a decoded answer; the error names the call and the first field that does not fit. */
export function fitAnswer<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new Error(`${what}: the answer does not fit the contract at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** Decodes and checks an answer. */
export function parseAnswer<S extends z.ZodType>(schema: S, text: string, what: string): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${what}: the answer is not JSON`);
  }
  return fitAnswer(schema, value, what);
}
