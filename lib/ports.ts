/**
 * The one list of well-known ports and HTTP paths. Every program, builder and test takes its
 * numbers from here so that a manifest and the process it describes cannot disagree.
 */
export const Ports = {
  postgres: 5432,
  haNodeApi: 8008,
  exporter: 9630,
  admin: 8080,
  operatorHealth: 8081,
  operatorMetrics: 8082,
  /** PgBouncer's client port in a pooler pod (clients connect as to PostgreSQL). */
  pooler: 5432,
  /** The `keelson pooler` control API (pause, resume, retarget), for ha-node only. */
  poolerControl: 8010,
  /** pgBackRest's TLS server in a database pod (its default port): backups taken on a standby reach the primary through it. */
  pgbackrestServer: 8432,
} as const;

export const HaNodePaths = {
  liveness: '/liveness',
  readiness: '/readiness',
  metrics: '/metrics',
  node: '/',
  primary: '/primary',
  replica: '/replica',
  health: '/health',
  cluster: '/cluster',
  history: '/history',
  /** The cluster's poolers as this member finds them: paused, target, reaching PostgreSQL. */
  poolers: '/poolers',
  config: '/config',
  switchover: '/switchover',
  failover: '/failover',
  restart: '/restart',
  reload: '/reload',
  reinitialize: '/reinitialize',
  ha: '/ha',
  /** Patroni's path of the node document (GET /ha's). */
  patroni: '/patroni',
  failsafe: '/failsafe',
  backup: '/backup',
  /** The leader's last pass over spec.roles and the Database objects. */
  managed: '/managed',
  /** Earliest and latest restorable time and LSN of each repository. */
  backupWindow: '/backup/window',
} as const;

/** The `keelson pooler` control API (sidecar/pooler/control-api.ts). */
export const PoolerPaths = {
  state: '/state',
  pause: '/pause',
  resume: '/resume',
  target: '/target',
  healthz: '/healthz',
  metrics: '/metrics',
} as const;

export const ExporterPaths = {
  metrics: '/metrics',
  up: '/up',
  health: '/health',
  liveness: '/liveness',
  readiness: '/readiness',
  primary: '/primary',
  replica: '/replica',
  reload: '/reload',
  explain: '/explain',
  stat: '/stat',
  read: '/read',
  version: '/version',
  primaryAliases: ['/leader', '/master', '/read-write', '/rw'],
  replicaAliases: ['/standby', '/read-only', '/ro', '/slave'],
} as const;

export const OperatorPaths = {
  healthz: '/healthz',
  readyz: '/readyz',
  metrics: '/metrics',
} as const;

export const AdminPaths = {
  apiPrefix: '/api/v1',
  health: '/healthz',
  healthAlias: '/health',
  metrics: '/metrics',
} as const;

/** Parses "host:port", ":port" or "port" as Go-style listen addresses do; ":9630" means all interfaces. */
export function parseListenAddress(value: string, defaultHost = '0.0.0.0'): { host: string; port: number } {
  const trimmed = value.trim();
  const match = /^(?:(?:\[([^\]]+)\]|([^:[\]]*)):)?(\d+)$/.exec(trimmed);
  if (!match) throw new Error(`invalid listen address "${value}": expected host:port, :port or port`);
  const host = match[1] ?? (match[2] && match[2].length > 0 ? match[2] : defaultHost);
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid listen address "${value}": port must be 0-65535`);
  }
  return { host, port };
}
