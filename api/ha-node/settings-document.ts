import { createHash } from 'node:crypto';
import { z } from 'zod';
import { backupConfigSchema } from './backup-settings.js';
import { dynamicConfigSchema } from './dynamic-config.js';

/**
 * The settings document the operator hands ha-node: the file of `keelson ha-node --config` (the
 * database ConfigMap), camelCase keys as ha-node's flags. It carries every setting the spec
 * controls; identity (pod name, namespace, address) and credentials stay in the pod environment.
 * ha-node reads each key with the schema below (sidecar/ha-node/config.ts takes them from here), so
 * the operator's builder and ha-node cannot disagree without the compiler noticing.
 *
 * Read once at start: `backup` and the pooler ports need a restart to change (the operator rolls
 * the pods through startSettingsDigest), `bootstrapConfig` only seeds a new cluster's DCS and later
 * changes go through PATCH /config with the same dynamic-configuration schema.
 */
export const haNodeSettingsKeys = {
  pgPort: z.number().int().min(1).max(65535),
  pgBin: z.string().min(1),
  /** Application database the primary keeps in place (created when missing). */
  database: z.string().min(1).max(63),
  /** Role owning the application database; the primary creates it when missing. */
  appOwner: z.string().min(1).max(63),
  /** The dynamic configuration a new cluster starts with (Patroni's bootstrap.dcs). */
  bootstrapConfig: dynamicConfigSchema,
  /** WAL archiving, backups and the restore bootstrap with pgBackRest; off when absent. */
  backup: backupConfigSchema,
  /** Control API port of the cluster's pooler pods, found through the Kubernetes API; 0: none. */
  poolerPods: z.number().int().min(0).max(65535),
  /** The same for the read-only pooler's pods. */
  poolerReadOnlyPods: z.number().int().min(0).max(65535),
  /** Folder of the mounted server TLS Secret (tls.crt, tls.key, ca.crt, client-ca.crt): PostgreSQL serves TLS. */
  serverTlsDir: z.string().min(1),
  /** Folder of the mounted replication client TLS Secret (tls.crt, tls.key, ca.crt). */
  replicationTlsDir: z.string().min(1),
  /** Folder of a standby cluster's copy of its source's replication client Secret (tls.crt, tls.key, ca.crt = the source's CA). */
  sourceTlsDir: z.string().min(1),
  /** A member's name plus this is the name its server certificate carries (`<cluster>-headless.<namespace>.svc`). */
  peerHostSuffix: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/),
};

export const haNodeSettingsDocumentSchema = z
  .object({
    pgPort: haNodeSettingsKeys.pgPort,
    pgBin: haNodeSettingsKeys.pgBin,
    database: haNodeSettingsKeys.database.optional(),
    appOwner: haNodeSettingsKeys.appOwner.optional(),
    bootstrapConfig: haNodeSettingsKeys.bootstrapConfig,
    backup: haNodeSettingsKeys.backup.optional(),
    poolerPods: haNodeSettingsKeys.poolerPods.optional(),
    poolerReadOnlyPods: haNodeSettingsKeys.poolerReadOnlyPods.optional(),
    serverTlsDir: haNodeSettingsKeys.serverTlsDir.optional(),
    replicationTlsDir: haNodeSettingsKeys.replicationTlsDir.optional(),
    peerHostSuffix: haNodeSettingsKeys.peerHostSuffix.optional(),
    sourceTlsDir: haNodeSettingsKeys.sourceTlsDir.optional(),
  })
  .strict();

export type HaNodeSettingsDocument = z.input<typeof haNodeSettingsDocumentSchema>;

/**
 * Digest of the keys read only at start (backup, pooler ports): the database pod template carries
 * it, so a change makes the template differ and the operator replaces the pods, as for any template
 * change. The other keys never roll a pod.
 */
export function startSettingsDigest(document: HaNodeSettingsDocument): string {
  const startOnly = { backup: document.backup, poolerPods: document.poolerPods, poolerReadOnlyPods: document.poolerReadOnlyPods };
  return createHash('sha256').update(JSON.stringify(startOnly)).digest('hex').slice(0, 16);
}
