import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * Credentials for the mutating endpoints. The operator puts them in a Secret and exposes it to
 * the container either as environment variables or as mounted files (the *_FILE variants, which
 * follow a rotation of the Secret on the next read). Basic auth and a bearer token may both be set.
 */
export interface ApiCredentials {
  username?: string;
  password?: string;
  token?: string;
}

export const authEnv = {
  username: 'KEELSON_API_USERNAME',
  password: 'KEELSON_API_PASSWORD',
  token: 'KEELSON_API_TOKEN',
} as const;

type FileReader = (path: string) => string;
const readText: FileReader = (path) => readFileSync(path, 'utf8');

/** Reads the credentials; undefined when none are configured (the API then stays open, as Patroni's). */
export function loadApiCredentials(env: NodeJS.ProcessEnv = process.env, read: FileReader = readText): ApiCredentials | undefined {
  const value = (name: string): string | undefined => {
    const file = env[`${name}_FILE`];
    if (file) return read(file).replace(/\r?\n$/, '');
    const direct = env[name];
    return direct === undefined || direct === '' ? undefined : direct;
  };
  const credentials: ApiCredentials = { username: value(authEnv.username), password: value(authEnv.password), token: value(authEnv.token) };
  if (credentials.password !== undefined && credentials.username === undefined) credentials.username = 'keelson';
  if (credentials.username !== undefined && credentials.password === undefined) throw new Error(`${authEnv.username} is set but ${authEnv.password} is not`);
  return credentials.password !== undefined || credentials.token !== undefined ? credentials : undefined;
}

export type AuthVerdict = 'ok' | 'missing' | 'invalid';

/** Checks an Authorization header against the credentials in constant time per candidate. */
export function checkAuthorization(header: string | undefined, credentials: ApiCredentials | undefined): AuthVerdict {
  if (!credentials) return 'ok';
  if (!header) return 'missing';
  const [scheme, ...rest] = header.trim().split(/\s+/);
  const value = rest.join(' ');
  if (!scheme || !value) return 'invalid';
  if (scheme.toLowerCase() === 'bearer' && credentials.token !== undefined) return sameSecret(value, credentials.token) ? 'ok' : 'invalid';
  if (scheme.toLowerCase() === 'basic' && credentials.password !== undefined) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return 'invalid';
    const userOk = sameSecret(decoded.slice(0, colon), credentials.username ?? '');
    const passwordOk = sameSecret(decoded.slice(colon + 1), credentials.password);
    return userOk && passwordOk ? 'ok' : 'invalid';
  }
  return 'invalid';
}

/** Compares digests so neither the length nor the content leaks through timing. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** An Authorization header value for clients (keelson ctl). */
export function authorizationHeader(credentials: ApiCredentials | undefined): string | undefined {
  if (!credentials) return undefined;
  if (credentials.token !== undefined) return `Bearer ${credentials.token}`;
  if (credentials.password !== undefined) return `Basic ${Buffer.from(`${credentials.username ?? 'keelson'}:${credentials.password}`).toString('base64')}`;
  return undefined;
}
