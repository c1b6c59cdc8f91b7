import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { booleanKey, ConfigError, listKey, loadConfig, numberKey, stringKey } from '../../lib/config.js';
import { isValidLabelName } from './config/validate.js';
import { databaseOf, normalizeUrl } from './connection.js';

/**
 * Flags and environment variables, named as pg_exporter names them (flags win over env vars,
 * env vars over defaults). Options that only Keelson has are marked in their descriptions.
 */
export const exporterConfigSpec = {
  config: { schema: z.string().optional(), env: 'PG_EXPORTER_CONFIG' },
  'web.listen-address': listKey({ default: [':9630'] }),
  'web.telemetry-path': stringKey({ env: 'PG_EXPORTER_TELEMETRY_PATH', default: '/metrics' }),
  'web.config.file': { schema: z.string().optional() },
  'web.auth-scope': { schema: z.enum(['all', 'admin']), env: 'PG_EXPORTER_AUTH_SCOPE', default: 'all' as const },
  label: { schema: z.string(), env: 'PG_EXPORTER_LABEL', default: '' },
  tag: listKey({ env: 'PG_EXPORTER_TAG', default: [] }),
  'auto-discovery': booleanKey({ env: 'PG_EXPORTER_AUTO_DISCOVERY', default: true }),
  'exclude-database': listKey({ env: 'PG_EXPORTER_EXCLUDE_DATABASE', default: ['template0', 'template1', 'postgres'] }),
  'include-database': listKey({ env: 'PG_EXPORTER_INCLUDE_DATABASE', default: [] }),
  namespace: { schema: z.string(), env: 'PG_EXPORTER_NAMESPACE', default: '' },
  'disable-cache': booleanKey({ env: 'PG_EXPORTER_DISABLE_CACHE', default: false }),
  'disable-intro': booleanKey({ env: 'PG_EXPORTER_DISABLE_INTRO', default: false }),
  'fail-fast': booleanKey({ env: 'PG_EXPORTER_FAIL_FAST', default: false }),
  'connect-timeout': numberKey({ env: 'PG_EXPORTER_CONNECT_TIMEOUT', default: 100, schema: z.number().int().positive() }),
  'health-interval': numberKey({ env: 'PG_EXPORTER_HEALTH_INTERVAL', default: 1000, schema: z.number().int().min(50) }),
  'log.level': stringKey({ env: 'LOG_LEVEL', default: 'info' }),
};

export interface ExporterOptions {
  url: string;
  configPath?: string;
  listenAddresses: string[];
  telemetryPath: string;
  webConfigFile?: string;
  authScope: 'all' | 'admin';
  constantLabels: Record<string, string>;
  serverTags: string[];
  autoDiscovery: boolean;
  excludeDatabases: string[];
  includeDatabases: string[];
  namespace: string;
  disableCache: boolean;
  disableIntro: boolean;
  failFast: boolean;
  connectTimeoutMs: number;
  healthIntervalMs: number;
  logLevel: string;
  warnings: string[];
}

export const defaultUrl = 'postgresql:///?sslmode=disable';
const fixedPaths = ['/', '/up', '/health', '/liveness', '/readiness', '/read', '/primary', '/leader', '/master', '/read-write', '/rw', '/replica', '/standby', '/slave', '/read-only', '/ro', '/reload', '/explain', '/stat', '/version'];

/** URL precedence: --url, PG_EXPORTER_URL, PGURL, the file named by PG_EXPORTER_URL_FILE, default. */
export function resolveUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const pick = flag || env.PG_EXPORTER_URL || env.PGURL;
  if (pick) return normalizeUrl(pick);
  if (env.PG_EXPORTER_URL_FILE) {
    try {
      return normalizeUrl(readFileSync(env.PG_EXPORTER_URL_FILE, 'utf8').trim());
    } catch (error) {
      throw new ConfigError('url', `env PG_EXPORTER_URL_FILE`, (error as Error).message);
    }
  }
  return defaultUrl;
}

/** "k=v,k2=v2" → labels; invalid names are reported as warnings and skipped, like pg_exporter. */
export function parseConstantLabels(text: string, warnings: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text.split(',')) {
    const trimmed = part.trim();
    if (!trimmed) continue;
    const eq = trimmed.indexOf('=');
    const name = eq < 0 ? trimmed : trimmed.slice(0, eq).trim();
    if (eq < 0 || !isValidLabelName(name)) {
      warnings.push(`constant label "${trimmed}" skipped: expected name=value with a valid label name`);
      continue;
    }
    labels[name] = trimmed.slice(eq + 1).trim();
  }
  return labels;
}

export function checkTelemetryPath(path: string): void {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw new ConfigError('web.telemetry-path', 'flag', `"${path}" is not a valid path`);
  }
  if (!decoded.startsWith('/') || decoded.includes('//') || /(^|\/)\.\.?(\/|$)/.test(decoded)) {
    throw new ConfigError('web.telemetry-path', 'flag', `"${path}" must be a canonical absolute path`);
  }
  if (fixedPaths.includes(decoded)) throw new ConfigError('web.telemetry-path', 'flag', `"${path}" clashes with a built-in endpoint`);
}

export function resolveExporterOptions(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): ExporterOptions {
  const { url: urlFlag, ...rest } = flags;
  const c = loadConfig(exporterConfigSpec, { flags: rest, env });
  const warnings: string[] = [];
  checkTelemetryPath(c['web.telemetry-path']);
  const constantLabels = parseConstantLabels(c.label, warnings);
  const url = resolveUrl(typeof urlFlag === 'string' ? urlFlag : undefined, env);
  return {
    url,
    configPath: c.config,
    listenAddresses: c['web.listen-address'],
    telemetryPath: c['web.telemetry-path'],
    webConfigFile: c['web.config.file'],
    authScope: c['web.auth-scope'],
    constantLabels,
    serverTags: c.tag,
    autoDiscovery: c['auto-discovery'],
    excludeDatabases: c['exclude-database'],
    includeDatabases: c['include-database'],
    namespace: c.namespace || (databaseOf(url) === 'pgbouncer' ? 'pgbouncer' : 'pg'),
    disableCache: c['disable-cache'],
    disableIntro: c['disable-intro'],
    failFast: c['fail-fast'],
    connectTimeoutMs: c['connect-timeout'],
    healthIntervalMs: c['health-interval'],
    logLevel: c['log.level'],
    warnings,
  };
}
