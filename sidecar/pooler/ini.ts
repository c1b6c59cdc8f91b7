/**
 * pgbouncer.ini as text, from the pooler settings and the current PostgreSQL target. Pure: the
 * program writes it and RELOADs when the target moves. Client passwords never appear here:
 * PgBouncer looks them up with auth_query through the pooler role (its password is the only one
 * in the auth file, beside the per-process admin password).
 */
import type { PoolMode } from '../../api/pooler/pgbouncer-parameters.js';

export interface PgbouncerTarget {
  host: string;
  port: number;
}

export interface PgbouncerIniSettings {
  listenAddr: string;
  listenPort: number;
  /** Holds the unix socket, the auth file and the pid file. */
  runDir: string;
  authFile: string;
  authUser: string;
  adminUser: string;
  poolMode: PoolMode;
  maxClientConnections: number;
  defaultPoolSize: number;
  /** Extra [pgbouncer] settings (names checked against allowedPgbouncerParameters by the API). */
  parameters: Record<string, string>;
  /** TLS settings (tls-files.ts); none: plaintext on both sides. */
  tls?: Record<string, string>;
}

/** The lookup function ha-node creates in every database (SECURITY DEFINER, see pooler-role.ts). */
export const authQuery = 'SELECT usename, passwd FROM keelson_pooler.user_lookup($1)';

/**
 * server_login_retry default: PgBouncer waits this long after a failed server connection before
 * the next, and a RELOAD to a new primary does not end the wait; so after a crash (connections to
 * the dead primary failing) it adds up to this much to the failover. 0.25 s (PgBouncer's own is
 * 15 s; fractions are accepted) keeps that small at four attempts a second against a dead server.
 */
const defaultServerLoginRetry = '0.25';

function line(key: string, value: string | number): string {
  const text = String(value);
  if (/[\r\n]/.test(text)) throw new Error(`pgbouncer setting ${key} must be a single line`);
  return `${key} = ${text}`;
}

export function renderPgbouncerIni(settings: PgbouncerIniSettings, target: PgbouncerTarget): string {
  const target_ = `host=${target.host} port=${target.port} auth_user=${settings.authUser}`;
  const base: Record<string, string | number> = {
    listen_addr: settings.listenAddr,
    listen_port: settings.listenPort,
    unix_socket_dir: settings.runDir,
    pidfile: '',
    auth_type: 'scram-sha-256',
    auth_file: settings.authFile,
    auth_user: settings.authUser,
    auth_query: authQuery,
    admin_users: settings.adminUser,
    // The pooler role may read SHOW statistics on the console: the pooler pod's exporter logs in as it.
    stats_users: settings.authUser,
    pool_mode: settings.poolMode,
    max_client_conn: settings.maxClientConnections,
    default_pool_size: settings.defaultPoolSize,
    server_login_retry: defaultServerLoginRetry,
    ignore_startup_parameters: 'extra_float_digits',
  };
  Object.assign(base, settings.tls);
  for (const [key, value] of Object.entries(settings.parameters)) base[key] = value;
  return [
    '[databases]',
    line('*', target_),
    '',
    '[pgbouncer]',
    ...Object.entries(base)
      .filter(([, v]) => v !== '')
      .map(([k, v]) => line(k, v)),
    '',
  ].join('\n');
}

/** One auth file line: "user" "secret" with double quotes doubled, as PgBouncer reads it. */
export function authFileLine(user: string, secret: string): string {
  const quote = (value: string): string => `"${value.replace(/"/g, '""')}"`;
  return `${quote(user)} ${quote(secret)}`;
}
