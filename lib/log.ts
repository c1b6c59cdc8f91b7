import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Field paths whose values never reach a log line. */
export const redactedPaths = [
  'password',
  '*.password',
  'token',
  '*.token',
  'accessToken',
  'refreshToken',
  '*.accessToken',
  '*.refreshToken',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'secret',
  '*.secret',
  'connectionString',
  '*.connectionString',
];

export interface LoggerSettings {
  /** Program or component name, logged as `name`. */
  name: string;
  /** Overrides LOG_LEVEL. */
  level?: string;
  /** Where JSON lines go; defaults to stdout. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream;
}

const validLevels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function resolveLogLevel(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const level = (explicit ?? env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!validLevels.has(level)) {
    throw new Error(`invalid LOG_LEVEL "${level}": expected one of ${[...validLevels].join(', ')}`);
  }
  return level;
}

/** JSON logger for one program; secrets listed in redactedPaths are censored. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    name: settings.name,
    level: resolveLogLevel(settings.level),
    redact: { paths: redactedPaths, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
