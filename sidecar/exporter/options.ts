import { fs } from '../../lib/builtins.js';
import { isValidLabelName } from './config/validate.js';
import { databaseOf, normalizeUrl } from './scrape/connection.js';
import { flag, integerAtLeast, list, nonEmptyText, oneOf, optionError, readOption, text, type OptionSpec } from './optionvalues.js';

const optionalText = (raw: unknown): string | undefined => text(raw);

/**
 * Flags and environment variables, named as pg_exporter names them (flags win over env vars,
 * env vars over defaults). Options that only Keelson has are marked in their descriptions.
 */
export const exporterOptionSpec = {
  config: { env: 'PG_EXPORTER_CONFIG', default: undefined, parse: optionalText },
  'web.listen-address': { default: [':9630'], parse: list },
  'web.telemetry-path': { env: 'PG_EXPORTER_TELEMETRY_PATH', default: '/metrics', parse: nonEmptyText },
  'web.config.file': { default: undefined, parse: optionalText },
  'web.auth-scope': { env: 'PG_EXPORTER_AUTH_SCOPE', default: 'all', parse: oneOf('all', 'admin') },
  label: { env: 'PG_EXPORTER_LABEL', default: '', parse: text },
  tag: { env: 'PG_EXPORTER_TAG', default: [], parse: list },
  'auto-discovery': { env: 'PG_EXPORTER_AUTO_DISCOVERY', default: true, parse: flag },
  'exclude-database': { env: 'PG_EXPORTER_EXCLUDE_DATABASE', default: ['template0', 'template1', 'postgres'], parse: list },
  'include-database': { env: 'PG_EXPORTER_INCLUDE_DATABASE', default: [], parse: list },
  namespace: { env: 'PG_EXPORTER_NAMESPACE', default: '', parse: text },
  'disable-cache': { env: 'PG_EXPORTER_DISABLE_CACHE', default: false, parse: flag },
  'disable-intro': { env: 'PG_EXPORTER_DISABLE_INTRO', default: false, parse: flag },
  'fail-fast': { env: 'PG_EXPORTER_FAIL_FAST', default: false, parse: flag },
  'connect-timeout': { env: 'PG_EXPORTER_CONNECT_TIMEOUT', default: 100, parse: integerAtLeast(1) },
  'health-interval': { env: 'PG_EXPORTER_HEALTH_INTERVAL', default: 1000, parse: integerAtLeast(50) },
  'log.level': { env: 'LOG_LEVEL', default: 'info', parse: nonEmptyText },
} satisfies Record<string, OptionSpec<unknown>>;

type OptionValues = { [K in keyof typeof exporterOptionSpec]: ReturnType<(typeof exporterOptionSpec)[K]['parse']> };

function readOptions(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(exporterOptionSpec)) values[key] = readOption<unknown>(key, spec, flags, env);
  return values as OptionValues;
}

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
const fixedPaths = [
  '/',
  '/up',
  '/health',
  '/liveness',
  '/readiness',
  '/read',
  '/primary',
  '/leader',
  '/master',
  '/read-write',
  '/rw',
  '/replica',
  '/standby',
  '/slave',
  '/read-only',
  '/ro',
  '/reload',
  '/explain',
  '/stat',
  '/version',
];

/** URL precedence: --url, PG_EXPORTER_URL, PGURL, the file named by PG_EXPORTER_URL_FILE, default. */
export function resolveUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const pick = flag || env.PG_EXPORTER_URL || env.PGURL;
  if (pick) return normalizeUrl(pick);
  if (env.PG_EXPORTER_URL_FILE) {
    try {
      return normalizeUrl(fs.readFileSync(env.PG_EXPORTER_URL_FILE, 'utf8').trim());
    } catch (error) {
      throw optionError('url', `env PG_EXPORTER_URL_FILE`, (error as Error).message);
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
    throw optionError('web.telemetry-path', 'flag', `"${path}" is not a valid path`);
  }
  if (!decoded.startsWith('/') || decoded.includes('//') || /(^|\/)\.\.?(\/|$)/.test(decoded)) {
    throw optionError('web.telemetry-path', 'flag', `"${path}" must be a canonical absolute path`);
  }
  if (fixedPaths.includes(decoded)) throw optionError('web.telemetry-path', 'flag', `"${path}" clashes with a built-in endpoint`);
}

export function resolveExporterOptions(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): ExporterOptions {
  const { url: urlFlag, ...rest } = flags;
  const c = readOptions(rest, env);
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
