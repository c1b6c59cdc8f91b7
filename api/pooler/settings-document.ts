import { z } from 'zod';

/**
 * The settings document the operator hands `keelson pooler --config` (the pooler ConfigMap),
 * camelCase keys as the pooler's flags. The pooler reads these keys with the schemas below
 * (sidecar/pooler/config.ts); the operator's builder returns this document's input type.
 */
export const poolerSettingsKeys = {
  /** Initial PostgreSQL host: the cluster's -rw Service (the read-only pooler's: -ro). */
  targetHost: z.string().min(1),
  targetPort: z.number().int().min(1).max(65535),
  authUser: z.string().min(1).max(63),
  poolMode: z.enum(['transaction', 'session']),
  maxClientConnections: z.number().int().min(1),
  defaultPoolSize: z.number().int().min(1),
  /** JSON object of extra [pgbouncer] settings (names from pgbouncer-parameters.ts). */
  parameters: z.string().min(1),
  /** Folder of the mounted server TLS Secret: TLS to clients and to PostgreSQL; absent: plaintext on both sides. */
  tlsDir: z.string().min(1),
};

export const poolerSettingsDocumentSchema = z.object({ ...poolerSettingsKeys, tlsDir: poolerSettingsKeys.tlsDir.optional() }).strict();

export type PoolerSettingsDocument = z.input<typeof poolerSettingsDocumentSchema>;
