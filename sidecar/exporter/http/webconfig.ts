import { createHash } from 'node:crypto';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fs } from '../../../lib/builtins.js';
import { yaml } from '../../../lib/yaml.js';

/**
 * The Prometheus exporter-toolkit web configuration (--web.config.file): TLS certificate and key,
 * basic-auth users with bcrypt hashes, extra response headers. Settings we cannot honour are
 * errors rather than silently weaker security.
 */
export interface WebConfig {
  tls?: { cert: Buffer; key: Buffer };
  /** user → bcrypt hash */
  users: Map<string, string>;
  headers: Record<string, string>;
  warnings: string[];
}

export class WebConfigError extends Error {
  constructor(file: string, field: string, detail: string) {
    super(`${file}: field "${field}": ${detail}`);
    this.name = 'WebConfigError';
  }
}

const topKeys = new Set(['tls_server_config', 'http_server_config', 'basic_auth_users']);
const tlsKeys = new Set([
  'cert_file',
  'key_file',
  'cert',
  'key',
  'client_auth_type',
  'client_ca_file',
  'client_ca',
  'cipher_suites',
  'curve_preferences',
  'min_version',
  'max_version',
  'prefer_server_cipher_suites',
  'client_allowed_sans',
]);
const httpKeys = new Set(['http2', 'headers']);
const bcryptPattern = /^\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}$/;

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function loadWebConfig(file: string): WebConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new WebConfigError(file, '(file)', `cannot read: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch (error) {
    throw new WebConfigError(file, '(file)', `invalid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  return parseWebConfig(doc ?? {}, file);
}

export function parseWebConfig(doc: unknown, file: string): WebConfig {
  if (!isMap(doc)) throw new WebConfigError(file, '(top level)', 'must be a map');
  for (const key of Object.keys(doc)) if (!topKeys.has(key)) throw new WebConfigError(file, key, 'unknown field');
  const warnings: string[] = [];
  const base = dirname(file);
  const readRelative = (field: string, path: unknown): Buffer => {
    if (typeof path !== 'string' || path === '') throw new WebConfigError(file, field, 'must be a file path');
    const full = isAbsolute(path) ? path : resolve(base, path);
    try {
      return fs.readFileSync(full);
    } catch (error) {
      throw new WebConfigError(file, field, `cannot read ${full}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };

  let tls: WebConfig['tls'];
  const tlsRaw = doc.tls_server_config;
  if (tlsRaw !== undefined && tlsRaw !== null) {
    if (!isMap(tlsRaw)) throw new WebConfigError(file, 'tls_server_config', 'must be a map');
    for (const key of Object.keys(tlsRaw)) if (!tlsKeys.has(key)) throw new WebConfigError(file, `tls_server_config.${key}`, 'unknown field');
    const cert =
      tlsRaw.cert_file !== undefined
        ? readRelative('tls_server_config.cert_file', tlsRaw.cert_file)
        : typeof tlsRaw.cert === 'string'
          ? Buffer.from(tlsRaw.cert)
          : undefined;
    const key =
      tlsRaw.key_file !== undefined
        ? readRelative('tls_server_config.key_file', tlsRaw.key_file)
        : typeof tlsRaw.key === 'string'
          ? Buffer.from(tlsRaw.key)
          : undefined;
    if (!cert) throw new WebConfigError(file, 'tls_server_config.cert_file', 'is required when tls_server_config is set');
    if (!key) throw new WebConfigError(file, 'tls_server_config.key_file', 'is required when tls_server_config is set');
    const clientAuth = tlsRaw.client_auth_type;
    if (clientAuth !== undefined && clientAuth !== 'NoClientCert' && clientAuth !== '') {
      throw new WebConfigError(file, 'tls_server_config.client_auth_type', `${String(clientAuth)} is not supported (only NoClientCert)`);
    }
    if (tlsRaw.min_version === 'TLS13' || tlsRaw.max_version !== undefined) {
      throw new WebConfigError(file, 'tls_server_config.min_version', 'only the default TLS 1.2+ range is supported');
    }
    for (const ignored of ['cipher_suites', 'curve_preferences', 'prefer_server_cipher_suites']) {
      if (tlsRaw[ignored] !== undefined) warnings.push(`${file}: tls_server_config.${ignored} ignored: Node's defaults apply`);
    }
    tls = { cert, key };
  }

  const headers: Record<string, string> = {};
  const httpRaw = doc.http_server_config;
  if (httpRaw !== undefined && httpRaw !== null) {
    if (!isMap(httpRaw)) throw new WebConfigError(file, 'http_server_config', 'must be a map');
    for (const key of Object.keys(httpRaw)) if (!httpKeys.has(key)) throw new WebConfigError(file, `http_server_config.${key}`, 'unknown field');
    if (httpRaw.headers !== undefined) {
      if (!isMap(httpRaw.headers)) throw new WebConfigError(file, 'http_server_config.headers', 'must be a map of header to value');
      for (const [name, value] of Object.entries(httpRaw.headers)) headers[name] = String(value);
    }
  }

  const users = new Map<string, string>();
  const usersRaw = doc.basic_auth_users;
  if (usersRaw !== undefined && usersRaw !== null) {
    if (!isMap(usersRaw)) throw new WebConfigError(file, 'basic_auth_users', 'must be a map of user name to bcrypt hash');
    for (const [user, hash] of Object.entries(usersRaw)) {
      if (typeof hash !== 'string' || !bcryptPattern.test(hash)) throw new WebConfigError(file, `basic_auth_users.${user}`, 'must be a bcrypt hash ($2y$...)');
      users.set(user, hash);
    }
  }
  return { tls, users, headers, warnings };
}

/** bcrypt, loaded with the first credentials to check (an exporter without users never needs it). */
const bcryptjs = async () => (await import('bcryptjs')).default;

/**
 * Checks basic-auth credentials against the bcrypt hashes. bcrypt is slow on purpose, so successful
 * checks are remembered by a hash of user and password (as exporter-toolkit does) to keep scrapes cheap.
 */
export class BasicAuthChecker {
  private readonly verified = new Set<string>();

  constructor(private readonly users: Map<string, string>) {}

  get enabled(): boolean {
    return this.users.size > 0;
  }

  async check(authorization: string | undefined): Promise<boolean> {
    if (!authorization || !authorization.toLowerCase().startsWith('basic ')) return false;
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const hash = this.users.get(user);
    const key = createHash('sha256').update(user).update('\0').update(password).digest('hex');
    if (hash === undefined) {
      // Spend comparable time for unknown users so their existence does not leak through timing.
      const decoy = this.users.values().next().value;
      if (decoy) await (await bcryptjs()).compare(password, decoy).catch(() => false);
      return false;
    }
    if (this.verified.has(key)) return true;
    const ok = await (await bcryptjs()).compare(password, hash);
    if (ok) {
      if (this.verified.size > 1000) this.verified.clear();
      this.verified.add(key);
    }
    return ok;
  }
}
