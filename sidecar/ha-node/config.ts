import { dirname, join } from 'node:path';
import { z } from 'zod';
import { booleanKey, loadConfig, numberKey, stringKey, type ConfigOf, type ConfigSources } from '../../lib/config.js';
import { Ports, parseListenAddress } from '../../lib/ports.js';
import type { MemberTags } from './dcs/types.js';
import { parsePoolerEntries } from './pooler/fleet.js';
import { appOwnerProblem, type AppOwnerSettings } from './postgres/app-owner.js';
import { defaultConfig, primaryHangTimeoutRange, validPrimaryHangTimeout } from './ha/settings.js';
import { describeProblems, validateDynamicConfig } from './ops/config-validate.js';
import type { DynamicConfig } from './dcs/types.js';
import { parseBackupConfig, type BackupConfig } from '../../api/ha-node/backup-settings.js';
import { dynamicConfigSchema } from '../../api/ha-node/dynamic-config.js';
import { haNodeSettingsKeys as documentKeys } from '../../api/ha-node/settings-document.js';
import { verifyClientModes, type ApiTlsSource, type VerifyClient } from './api/api-tls.js';

/** A key the operator's settings document may hold as a map (JSON text from the environment or a flag). */
const jsonDocument = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);

/**
 * Every setting of `keelson ha-node`: flags > environment > file > defaults. The operator's pods
 * get identity and credentials from the environment and every spec-controlled setting from the
 * settings document (api/ha-node/settings-document.ts, whose schemas check those keys here too).
 * The environment variables of the HA timings and rules (KEELSON_TTL, ...) and of the document's
 * keys are the lone-ha-node mode: ha-node started by hand or by the tests; the operator never sets them.
 */
export const haNodeConfigSpec = {
  name: stringKey({ env: 'POD_NAME', description: 'member name (the pod name)' }),
  namespace: stringKey({ env: 'POD_NAMESPACE', default: 'default' }),
  scope: stringKey({ env: 'KEELSON_CLUSTER', description: 'cluster name; prefixes the DCS Leases' }),
  podIp: stringKey({ env: 'POD_IP', default: '127.0.0.1', description: 'address other members and clients use' }),
  apiListen: stringKey({ env: 'KEELSON_API_LISTEN', default: `:${Ports.haNodeApi}` }),
  pgListen: stringKey({ env: 'KEELSON_PG_LISTEN', default: '*' }),
  pgPort: numberKey({ env: 'KEELSON_PG_PORT', default: Ports.postgres, schema: documentKeys.pgPort }),
  dataDir: stringKey({ env: 'PGDATA', default: '/var/lib/postgresql/data/pgdata' }),
  pgBin: stringKey({ env: 'PG_BIN', default: '/usr/lib/postgresql/15/bin', schema: documentKeys.pgBin }),
  runAs: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_PG_RUN_AS',
    description: 'system user PostgreSQL runs as when ha-node is root (default postgres)',
  },
  socketDir: { schema: z.string().min(1).optional(), env: 'KEELSON_PG_SOCKET_DIR' },
  walDir: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_WAL_DIR',
    description: 'folder on a volume of its own for pg_wal (linked from the data directory before every start); unset: pg_wal stays in the data directory',
  },
  superuserName: stringKey({ env: 'KEELSON_SUPERUSER_USERNAME', default: 'postgres' }),
  superuserPassword: stringKey({ env: 'KEELSON_SUPERUSER_PASSWORD' }),
  replicationName: stringKey({ env: 'KEELSON_REPLICATION_USERNAME', default: 'replicator' }),
  replicationPassword: stringKey({ env: 'KEELSON_REPLICATION_PASSWORD' }),
  database: {
    schema: documentKeys.database.optional(),
    env: 'KEELSON_DATABASE',
    description: 'application database the primary keeps in place (created when missing)',
  },
  appOwner: {
    schema: documentKeys.appOwner.optional(),
    env: 'KEELSON_APP_OWNER',
    description: 'role owning the application database; the primary creates it when missing',
  },
  appPasswordFile: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_APP_PASSWORD_FILE',
    description: "file with the application owner's password (the mounted Secret); re-read every cycle, the role's password follows it",
  },
  poolers: {
    schema: z.string(),
    env: 'KEELSON_POOLERS',
    default: '',
    description: "comma-separated host:port of the poolers' control APIs (a host name may resolve to several pods); paused around a switchover",
  },
  poolerPods: numberKey({
    env: 'KEELSON_POOLER_PODS',
    default: 0,
    schema: documentKeys.poolerPods,
    description: "control API port of this cluster's pooler pods (label keelson.io/component=pooler), found through the Kubernetes API; 0: none",
  }),
  poolerReadOnlyPods: numberKey({
    env: 'KEELSON_POOLER_RO_PODS',
    default: 0,
    schema: documentKeys.poolerReadOnlyPods,
    description:
      "control API port of this cluster's read-only pooler pods (label keelson.io/component=pooler-ro): the primary points them at streaming replicas; 0: none",
  }),
  poolerPasswordFile: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_POOLER_PASSWORD_FILE',
    description: "file with the pooler role's password; set: the primary keeps the pooler's auth_query role and lookup function in place",
  },
  poolerPauseTimeout: numberKey({
    env: 'KEELSON_POOLER_PAUSE_TIMEOUT',
    default: 5,
    schema: z.number().min(0.1).max(60),
    description: 'seconds a pooler PAUSE may take before the switchover is aborted',
  }),
  ttl: numberKey({ env: 'KEELSON_TTL', default: 30, schema: z.number().int().min(2) }),
  loopWait: numberKey({ env: 'KEELSON_LOOP_WAIT', default: 10, schema: z.number().min(0.2) }),
  retryTimeout: numberKey({ env: 'KEELSON_RETRY_TIMEOUT', default: 10, schema: z.number().min(1) }),
  maximumLagOnFailover: numberKey({ env: 'KEELSON_MAXIMUM_LAG_ON_FAILOVER', default: 1_048_576, schema: z.number().int().min(0) }),
  primaryStartTimeout: numberKey({ env: 'KEELSON_PRIMARY_START_TIMEOUT', default: 300, schema: z.number().min(0) }),
  primaryHangTimeout: numberKey({
    env: 'KEELSON_PRIMARY_HANG_TIMEOUT',
    default: defaultConfig.primary_hang_timeout,
    schema: z.number().refine(validPrimaryHangTimeout, `must be 0 or ${primaryHangTimeoutRange.min} to ${primaryHangTimeoutRange.max} seconds`),
    description: 'seconds a primary that stopped answering keeps the lock before it is fenced (0: never)',
  }),
  checkTimeline: booleanKey({ env: 'KEELSON_CHECK_TIMELINE', default: false }),
  failsafeMode: booleanKey({ env: 'KEELSON_FAILSAFE_MODE', default: false }),
  synchronousMode: booleanKey({ env: 'KEELSON_SYNCHRONOUS_MODE', default: false }),
  useRewind: booleanKey({ env: 'KEELSON_USE_REWIND', default: true }),
  useSlots: booleanKey({ env: 'KEELSON_USE_SLOTS', default: true }),
  fencing: booleanKey({ env: 'KEELSON_FENCING', default: true, description: 'run the fencing process beside ha-node' }),
  tags: stringKey({ env: 'KEELSON_TAGS', default: '{}', description: 'JSON object of member tags (nofailover, noloadbalance, ...)' }),
  pgParameters: stringKey({ env: 'KEELSON_PG_PARAMETERS', default: '{}', description: 'JSON object of local postgresql.conf parameters' }),
  bootstrapConfig: {
    schema: jsonDocument,
    env: 'KEELSON_BOOTSTRAP_CONFIG',
    default: '{}',
    document: true,
    description:
      "dynamic configuration (Patroni's bootstrap.dcs; JSON text from the environment or a flag) this member writes to the DCS when it initialises a new cluster; ignored once the DCS holds one (change it with PATCH /config)",
  },
  backup: {
    schema: jsonDocument.optional(),
    env: 'KEELSON_BACKUP',
    document: true,
    description:
      'the pgBackRest settings (stanza, repositories, retention, recovery source; JSON text from the environment); WAL archiving and backups are off when unset',
  },
  pgbackrestBin: stringKey({ env: 'KEELSON_PGBACKREST', default: 'pgbackrest', description: 'the pgbackrest executable' }),
  kubeconfig: { schema: z.string().min(1).optional(), description: 'kubeconfig path (else KUBECONFIG, in-cluster, ~/.kube/config)' },
  apiCertFile: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_API_CERTFILE',
    description: 'PEM certificate (chain) of the REST API; with the key file the API serves HTTPS',
  },
  apiKeyFile: { schema: z.string().min(1).optional(), env: 'KEELSON_API_KEYFILE', description: 'PEM private key of the REST API certificate' },
  apiCaFile: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_API_CAFILE',
    description: "CA (PEM) client certificates are verified with (Patroni's restapi.cafile); with serverTlsDir: the server Secret's client-ca.crt",
  },
  apiVerifyClient: {
    schema: z.enum(verifyClientModes),
    env: 'KEELSON_API_VERIFY_CLIENT',
    default: 'none' as VerifyClient,
    description:
      "Patroni's restapi.verify_client: none; optional (POST/PUT/PATCH/DELETE need a client certificate the CA file verifies, besides the credentials); required (every connection)",
  },
  serverTlsDir: {
    schema: documentKeys.serverTlsDir.optional(),
    env: 'KEELSON_SERVER_TLS_DIR',
    description: 'folder of the server TLS Secret (tls.crt, tls.key, ca.crt, client-ca.crt): PostgreSQL runs with ssl on, and reloads when the files change',
  },
  replicationTlsDir: {
    schema: documentKeys.replicationTlsDir.optional(),
    env: 'KEELSON_REPLICATION_TLS_DIR',
    description: 'folder of the replication client TLS Secret (tls.crt, tls.key, ca.crt)',
  },
  peerHostSuffix: {
    schema: documentKeys.peerHostSuffix.optional(),
    env: 'KEELSON_PEER_HOST_SUFFIX',
    description:
      "with serverTlsDir: a member's name plus this is the name its certificate carries; replication, pg_basebackup and pg_rewind then verify the leader's certificate (verify-full) and present the replication client certificate",
  },
  sourceTlsDir: {
    schema: documentKeys.sourceTlsDir.optional(),
    env: 'KEELSON_SOURCE_TLS_DIR',
    description:
      "with serverTlsDir: folder of a standby cluster's copy of its source's replication client Secret (tls.crt, tls.key, ca.crt); a source with standby_cluster.server_name is then reached with verify-full and this certificate",
  },
};

export interface HaNodeSettings {
  name: string;
  namespace: string;
  scope: string;
  podIp: string;
  api: { host: string; port: number };
  pgListen: string;
  pgPort: number;
  dataDir: string;
  pgBin: string;
  runAs?: string;
  socketDir: string;
  /** pg_wal's folder on the WAL volume, when there is one (disk/wal-volume.ts). */
  walDir?: string;
  superuser: { username: string; password: string };
  replication: { username: string; password: string };
  /** The application role and database the primary keeps in place. */
  app: AppOwnerSettings;
  /** Pooler control API entries (host:port), checked by parsePoolerEntries. */
  poolers: string[];
  /** Control API port of the cluster's pooler pods; 0 when there are none to find. */
  poolerPods: number;
  /** Control API port of the cluster's read-only pooler pods; 0 when there are none to find. */
  poolerReadOnlyPods: number;
  poolerPasswordFile?: string;
  poolerPauseTimeoutMs: number;
  ttl: number;
  loopWait: number;
  retryTimeout: number;
  maximumLagOnFailover: number;
  primaryStartTimeout: number;
  primaryHangTimeout: number;
  checkTimeline: boolean;
  failsafeMode: boolean;
  synchronousMode: boolean;
  useRewind: boolean;
  useSlots: boolean;
  fencing: boolean;
  tags: MemberTags;
  pgParameters: Record<string, string | number | boolean>;
  /** The first dynamic configuration of a new cluster (checked like a PATCH /config body). */
  bootstrapConfig: DynamicConfig;
  /** WAL archiving, backups and the restore bootstrap with pgBackRest; off when undefined. */
  backup?: BackupConfig;
  pgbackrestBin: string;
  kubeconfig?: string;
  /**
   * The REST API's certificate files: KEELSON_API_CERTFILE/KEYFILE (set together), else the server
   * TLS Secret's (serverTlsDir); neither: plain HTTP.
   */
  apiTls?: ApiTlsSource;
  /** The mounted TLS Secrets' folders; PostgreSQL serves TLS when set (postgres/server-tls.ts). */
  serverTls?: { serverDir: string; replicationDir?: string; peerHostSuffix?: string; sourceDir?: string };
}

function jsonObject(key: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`invalid configuration key "${key}": not valid JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`invalid configuration key "${key}": must be a JSON object`);
  return value as Record<string, unknown>;
}

export function loadHaNodeSettings(sources: ConfigSources): HaNodeSettings {
  const c = loadConfig(haNodeConfigSpec, sources);
  const parameters = jsonObject('pgParameters', c.pgParameters);
  for (const [name, value] of Object.entries(parameters)) {
    if (!['string', 'number', 'boolean'].includes(typeof value))
      throw new Error(`invalid configuration key "pgParameters": ${name} must be a string, number or boolean`);
  }
  return {
    name: c.name,
    namespace: c.namespace,
    scope: c.scope,
    podIp: c.podIp,
    api: parseListenAddress(c.apiListen),
    pgListen: c.pgListen,
    pgPort: c.pgPort,
    dataDir: c.dataDir,
    pgBin: c.pgBin,
    runAs: c.runAs,
    socketDir: c.socketDir ?? join(dirname(c.dataDir), 'run'),
    ...(c.walDir ? { walDir: c.walDir } : {}),
    superuser: { username: c.superuserName, password: c.superuserPassword },
    replication: { username: c.replicationName, password: c.replicationPassword },
    app: appOwnerFrom(c.appOwner, c.database, c.appPasswordFile, [c.superuserName, c.replicationName]),
    poolers: poolerEntriesFrom(c.poolers),
    poolerPods: c.poolerPods,
    poolerReadOnlyPods: c.poolerReadOnlyPods,
    poolerPasswordFile: c.poolerPasswordFile,
    poolerPauseTimeoutMs: Math.round(c.poolerPauseTimeout * 1000),
    ttl: c.ttl,
    loopWait: c.loopWait,
    retryTimeout: c.retryTimeout,
    maximumLagOnFailover: c.maximumLagOnFailover,
    primaryStartTimeout: c.primaryStartTimeout,
    primaryHangTimeout: c.primaryHangTimeout,
    checkTimeline: c.checkTimeline,
    failsafeMode: c.failsafeMode,
    synchronousMode: c.synchronousMode,
    useRewind: c.useRewind,
    useSlots: c.useSlots,
    fencing: c.fencing,
    tags: jsonObject('tags', c.tags) as MemberTags,
    pgParameters: parameters as Record<string, string | number | boolean>,
    bootstrapConfig: bootstrapConfigFrom(c.bootstrapConfig),
    backup: c.backup === undefined ? undefined : parseBackupConfig(c.backup),
    pgbackrestBin: c.pgbackrestBin,
    kubeconfig: c.kubeconfig,
    apiTls: apiTlsFrom(c),
    ...(c.serverTlsDir
      ? {
          serverTls: {
            serverDir: c.serverTlsDir,
            ...(c.replicationTlsDir ? { replicationDir: c.replicationTlsDir } : {}),
            ...(c.peerHostSuffix ? { peerHostSuffix: c.peerHostSuffix } : {}),
            ...(c.sourceTlsDir ? { sourceDir: c.sourceTlsDir } : {}),
          },
        }
      : {}),
  };
}

function bootstrapConfigFrom(value: string | Record<string, unknown>): DynamicConfig {
  const config = typeof value === 'string' ? jsonObject('bootstrapConfig', value) : value;
  const problems = validateDynamicConfig(config);
  if (problems.length > 0) throw new Error(`invalid configuration key "bootstrapConfig": ${describeProblems(problems)}`);
  return dynamicConfigSchema.parse(config);
}

function poolerEntriesFrom(text: string): string[] {
  try {
    return parsePoolerEntries(text);
  } catch (error) {
    throw new Error(`invalid configuration key "poolers": ${(error as Error).message}`, { cause: error });
  }
}

function appOwnerFrom(owner: string | undefined, database: string | undefined, passwordFile: string | undefined, reserved: string[]): AppOwnerSettings {
  const problem = appOwnerProblem(owner, reserved);
  if (problem) throw new Error(`invalid configuration key "appOwner": ${problem}`);
  return { owner, database, passwordFile };
}

type ApiTlsKeys = Pick<ConfigOf<typeof haNodeConfigSpec>, 'apiCertFile' | 'apiKeyFile' | 'apiCaFile' | 'apiVerifyClient' | 'serverTlsDir'>;

/** The REST API's files: explicit ones, else the server Secret's (HTTPS by default wherever PostgreSQL serves TLS). */
function apiTlsFrom(c: ApiTlsKeys): HaNodeSettings['apiTls'] {
  const { apiCertFile: certFile, apiKeyFile: keyFile, apiVerifyClient: verifyClient } = c;
  if ((certFile && !keyFile) || (!certFile && keyFile))
    throw new Error('invalid configuration: KEELSON_API_CERTFILE and KEELSON_API_KEYFILE must be set together');
  const files =
    certFile && keyFile
      ? { certFile, keyFile, ...(c.apiCaFile ? { caFile: c.apiCaFile } : {}) }
      : c.serverTlsDir
        ? { certFile: join(c.serverTlsDir, 'tls.crt'), keyFile: join(c.serverTlsDir, 'tls.key'), caFile: c.apiCaFile ?? join(c.serverTlsDir, 'client-ca.crt') }
        : undefined;
  if (!files) {
    if (verifyClient !== 'none') throw new Error('invalid configuration key "apiVerifyClient": needs HTTPS (KEELSON_API_CERTFILE/KEYFILE or serverTlsDir)');
    return undefined;
  }
  if (verifyClient !== 'none' && !files.caFile) throw new Error(`invalid configuration key "apiVerifyClient": ${verifyClient} needs KEELSON_API_CAFILE`);
  return { ...files, verifyClient };
}
