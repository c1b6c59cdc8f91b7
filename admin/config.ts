import { z } from 'zod';
import { booleanKey, listKey, loadConfig, numberKey, stringKey, type ConfigKey, type ConfigOf } from '../lib/config.js';
import { Ports } from '../lib/ports.js';

/** The built-in development key: fine on a laptop, refused when NODE_ENV=production. */
export const DEVELOPMENT_SECRET_KEY = 'keelson-development-secret-key-change-me';

/** A string key that may be absent. */
const optionalString = (env: string, min = 1): ConfigKey<string | undefined> => ({ schema: z.string().min(min).optional(), env });

const positive = (opts: Parameters<typeof numberKey>[0]) => numberKey({ schema: z.number().int().positive(), ...opts });

export const adminConfigSpec = {
  listen: stringKey({ env: 'LISTEN_ADDRESS', default: `:${Ports.admin}`, description: 'listen address' }),
  databaseUrl: stringKey({ env: 'DATABASE_URL', description: 'PostgreSQL connection URL' }),
  redisUrl: stringKey({ env: 'REDIS_URL', default: 'redis://127.0.0.1:6379', description: 'Redis URL' }),
  secretKey: stringKey({ env: 'SECRET_KEY', default: DEVELOPMENT_SECRET_KEY, schema: z.string().min(16) }),
  jwtAlgorithm: stringKey({ env: 'JWT_ALGORITHM', default: 'HS256', schema: z.enum(['HS256', 'HS384', 'HS512']) }),
  accessTokenMinutes: positive({ env: 'JWT_ACCESS_TOKEN_EXPIRE_MINUTES', default: 720 }),
  refreshTokenMinutes: positive({ env: 'JWT_REFRESH_TOKEN_EXPIRE_MINUTES', default: 10080 }),
  initialUsername: stringKey({ env: 'ADMIN_INITIAL_USERNAME', default: 'admin', schema: z.string().min(1).max(20) }),
  initialPassword: optionalString('ADMIN_INITIAL_PASSWORD', 6),
  // Argon2id cost; production defaults follow OWASP guidance, tests lower them through env.
  argon2MemoryKib: positive({ env: 'ARGON2_MEMORY_KIB', default: 19456 }),
  argon2TimeCost: positive({ env: 'ARGON2_TIME_COST', default: 2 }),
  argon2Parallelism: positive({ env: 'ARGON2_PARALLELISM', default: 1 }),
  loginLimitPerUser: positive({ env: 'LOGIN_RATE_LIMIT_PER_USER', default: 5 }),
  loginLimitPerAddress: positive({ env: 'LOGIN_RATE_LIMIT_PER_ADDRESS', default: 30 }),
  loginLimitWindowSeconds: positive({ env: 'LOGIN_RATE_LIMIT_WINDOW_SECONDS', default: 60 }),
  // Connections that carry single statements pipelined, with one write per event-loop turn (ADR 0207); 0 sends them through the pool.
  dbPipelineConnections: numberKey({ env: 'DB_PIPELINE_CONNECTIONS', default: 2, schema: z.number().int().min(0).max(16) }),
  redisTimeoutMs: positive({ env: 'REDIS_TIMEOUT_MS', default: 500 }),
  trustProxy: booleanKey({ env: 'TRUST_PROXY', default: false }),
  // Origins allowed to call the API from a browser (the front end on another origin); '*' allows any.
  corsOrigins: listKey({ env: 'CORS_ORIGINS', default: [] }),
  businessModulesDir: optionalString('BUSINESS_MODULES_DIR'),
  // The front end has Keelson's web/ DatabaseClusters page: only then is its menu seeded and delivered.
  clustersPage: booleanKey({ env: 'CLUSTERS_PAGE', default: false }),
  // While a password change is pending: writes (reads answer, changes wait), all (only the password routes), off (reported only).
  passwordChangeEnforcement: stringKey({ env: 'PASSWORD_CHANGE_ENFORCEMENT', default: 'writes', schema: z.enum(['writes', 'all', 'off']) }),
  kubeconfig: optionalString('KUBECONFIG'),
} as const;

export type AdminConfig = ConfigOf<typeof adminConfigSpec>;

export interface ConfigProblem {
  level: 'warn' | 'fatal';
  message: string;
}

/** Checks that need more than one key or the environment: the development secret in production. */
export function checkSecret(config: AdminConfig, env: NodeJS.ProcessEnv = process.env): ConfigProblem | undefined {
  if (config.secretKey !== DEVELOPMENT_SECRET_KEY) return undefined;
  if (env.NODE_ENV === 'production') {
    return { level: 'fatal', message: 'SECRET_KEY is the built-in development value; set SECRET_KEY before running with NODE_ENV=production' };
  }
  return { level: 'warn', message: 'SECRET_KEY is the built-in development value; tokens and public ids are forgeable. Set SECRET_KEY.' };
}

export function loadAdminConfig(flags: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = process.env): AdminConfig {
  return loadConfig(adminConfigSpec, { flags, env });
}
