import { execFileSync } from 'node:child_process';
import { z } from 'zod';
import { loadConfig, numberKey, stringKey, type ConfigSources } from '../../lib/config.js';
import { Ports, parseListenAddress } from '../../lib/ports.js';
import { allowedPgbouncerParameters, type PoolMode } from '../../api/pooler/pgbouncer-parameters.js';
import { poolerSettingsKeys as documentKeys } from '../../api/pooler/settings-document.js';
import type { PoolerSettings } from './run.js';

/** Every setting of `keelson pooler`: flags > environment (the pooler Deployment sets KEELSON_POOLER_*) > file > defaults. */
export const poolerConfigSpec = {
  listen: stringKey({ env: 'KEELSON_POOLER_LISTEN', default: `0.0.0.0:${Ports.pooler}`, description: 'PgBouncer client listen address' }),
  controlListen: stringKey({
    env: 'KEELSON_POOLER_CONTROL_LISTEN',
    default: `:${Ports.poolerControl}`,
    description: 'control API (pause, resume, retarget) for ha-node',
  }),
  runDir: stringKey({ env: 'KEELSON_POOLER_RUN_DIR', default: '/var/run/pgbouncer' }),
  targetHost: stringKey({
    env: 'KEELSON_POOLER_TARGET_HOST',
    schema: documentKeys.targetHost,
    description: 'initial PostgreSQL host: the cluster -rw Service',
  }),
  targetPort: numberKey({ env: 'KEELSON_POOLER_TARGET_PORT', default: Ports.postgres, schema: documentKeys.targetPort }),
  authUser: stringKey({ env: 'KEELSON_POOLER_AUTH_USER', default: 'keelson_pooler', schema: documentKeys.authUser }),
  authPasswordFile: stringKey({ env: 'KEELSON_POOLER_PASSWORD_FILE', default: '/etc/keelson-pooler/password' }),
  poolMode: { schema: documentKeys.poolMode, env: 'KEELSON_POOLER_MODE', default: 'transaction' as PoolMode },
  maxClientConnections: numberKey({ env: 'KEELSON_POOLER_MAX_CLIENT_CONN', default: 1000, schema: documentKeys.maxClientConnections }),
  defaultPoolSize: numberKey({ env: 'KEELSON_POOLER_DEFAULT_POOL_SIZE', default: 20, schema: documentKeys.defaultPoolSize }),
  parameters: stringKey({
    env: 'KEELSON_POOLER_PARAMETERS',
    default: '{}',
    schema: documentKeys.parameters,
    description: 'JSON object of extra [pgbouncer] settings',
  }),
  pgbouncerBin: stringKey({ env: 'KEELSON_PGBOUNCER_BIN', default: '/usr/sbin/pgbouncer' }),
  runAs: {
    schema: z.string().min(1).optional(),
    env: 'KEELSON_POOLER_RUN_AS',
    description: 'system user PgBouncer runs as when this process is root (default postgres)',
  },
  tlsDir: {
    schema: documentKeys.tlsDir.optional(),
    env: 'KEELSON_POOLER_TLS_DIR',
    description:
      "folder of the cluster's server TLS Secret (tls.crt, tls.key, ca.crt): clients may reach PgBouncer over TLS, and PgBouncer verifies PostgreSQL's certificate (verify-ca)",
  },
};

/** The parameters object: string values, only names PgBouncer settings a user may change. */
export function parsePoolerParameters(text: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('invalid configuration key "parameters": not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('invalid configuration key "parameters": expected an object');
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(value)) {
    if (!allowedPgbouncerParameters.includes(name)) throw new Error(`invalid configuration key "parameters": unknown or reserved PgBouncer setting "${name}"`);
    if (!['string', 'number', 'boolean'].includes(typeof raw)) throw new Error(`invalid configuration key "parameters": ${name} must be a string or number`);
    out[name] = String(raw);
  }
  return out;
}

function userIds(user: string): { uid: number; gid: number } {
  return { uid: Number(execFileSync('id', ['-u', user]).toString().trim()), gid: Number(execFileSync('id', ['-g', user]).toString().trim()) };
}

export function loadPoolerSettings(sources: ConfigSources): PoolerSettings {
  const c = loadConfig(poolerConfigSpec, sources);
  const listen = parseListenAddress(c.listen);
  return {
    listenAddr: listen.host,
    listenPort: listen.port,
    control: parseListenAddress(c.controlListen),
    runDir: c.runDir,
    target: { host: c.targetHost, port: c.targetPort },
    authUser: c.authUser,
    authPasswordFile: c.authPasswordFile,
    poolMode: c.poolMode,
    maxClientConnections: c.maxClientConnections,
    defaultPoolSize: c.defaultPoolSize,
    parameters: parsePoolerParameters(c.parameters),
    pgbouncerBin: c.pgbouncerBin,
    runAs: process.getuid?.() === 0 ? userIds(c.runAs ?? 'postgres') : undefined,
    ...(c.tlsDir ? { tlsDir: c.tlsDir } : {}),
  };
}
