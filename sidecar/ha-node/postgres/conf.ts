/**
 * Pure builders for the files ha-node owns in the data directory. postgresql.conf (and pg_hba.conf,
 * see hba.ts) are rewritten before every start, because pg_basebackup and pg_rewind copy the leader's.
 */
import { isIP } from 'node:net';
import { defaultWalKeepMb } from '../../../api/ha-node/dynamic-config.js';

export type ParameterValue = string | number | boolean;

export interface ConnectionTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  applicationName: string;
  /** verify-full against the cluster CA (peer-tls.ts). */
  tls?: ConnectionTls;
}

/** libpq TLS to a server that must present a certificate for `serverName`, signed by a CA of `rootCert`. */
export interface ConnectionTls {
  serverName: string;
  rootCert: string;
  cert?: string;
  key?: string;
}

/**
 * The host and TLS parts of a connection string: the name checked against the certificate in
 * `host`, the address connected to in `hostaddr` (no DNS lookup needed).
 */
export function tlsConnParts(host: string, tls: ConnectionTls): string[] {
  const address = isIP(host) ? [`host=${quoteConnValue(tls.serverName)}`, `hostaddr=${quoteConnValue(host)}`] : [`host=${quoteConnValue(host)}`];
  const client = tls.cert && tls.key ? [`sslcert=${quoteConnValue(tls.cert)}`, `sslkey=${quoteConnValue(tls.key)}`] : [];
  return [...address, 'sslmode=verify-full', `sslrootcert=${quoteConnValue(tls.rootCert)}`, ...client];
}

/** Quotes a value for a libpq connection string. */
export function quoteConnValue(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export function connInfo(target: ConnectionTarget, dbname?: string): string {
  const parts = [
    ...(target.tls ? tlsConnParts(target.host, target.tls) : [`host=${quoteConnValue(target.host)}`]),
    `port=${target.port}`,
    `user=${quoteConnValue(target.user)}`,
    `password=${quoteConnValue(target.password)}`,
    `application_name=${quoteConnValue(target.applicationName)}`,
    'connect_timeout=3',
  ];
  if (dbname) parts.push(`dbname=${quoteConnValue(dbname)}`);
  return parts.join(' ');
}

/** Renders one postgresql.conf value with the quoting the server expects. */
export function renderValue(value: ParameterValue): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  // The file's grammar has no exponent for integers: 1e+300 unquoted is a syntax error that voids the whole file.
  if (typeof value === 'number' && !/e/i.test(String(value))) return String(value);
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export interface ServerConfInput {
  listenAddress: string;
  port: number;
  socketDir: string;
  clusterName: string;
  /** Settings from dynamic config and local config, later entries win. */
  parameters: Record<string, ParameterValue>;
  /** Set for a replica: where to stream from, the slot to use, and (standby leader) the remote source's recovery settings. */
  standby?: { primaryConninfo?: string; slotName?: string; settings?: Record<string, ParameterValue> };
}

/** Settings every member needs for physical replication and pg_rewind. */
export const baseParameters: Record<string, ParameterValue> = {
  wal_level: 'replica',
  hot_standby: true,
  max_wal_senders: 10,
  max_replication_slots: 10,
  wal_log_hints: true,
  wal_keep_size: `${defaultWalKeepMb}MB`,
  hot_standby_feedback: true,
  max_connections: 100,
  logging_collector: false,
  synchronous_commit: 'on',
  wal_retrieve_retry_interval: '1s',
};

export function buildServerConf(input: ServerConfInput): string {
  const settings: Record<string, ParameterValue> = {
    ...baseParameters,
    ...input.parameters,
    listen_addresses: input.listenAddress,
    port: input.port,
    unix_socket_directories: input.socketDir,
    cluster_name: input.clusterName,
    recovery_target_timeline: 'latest',
  };
  if (input.standby?.primaryConninfo) settings.primary_conninfo = input.standby.primaryConninfo;
  if (input.standby?.slotName) settings.primary_slot_name = input.standby.slotName;
  Object.assign(settings, input.standby?.settings);
  const lines = ['# Written by keelson ha-node; edits are overwritten. Use the dynamic configuration instead.'];
  for (const [name, value] of Object.entries(settings)) lines.push(`${name} = ${renderValue(value)}`);
  return `${lines.join('\n')}\n`;
}

/** A physical replication slot name for a member (lower case letters, digits and underscores). */
export function slotNameFor(member: string): string {
  return member
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 63);
}
