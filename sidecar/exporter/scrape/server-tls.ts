import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { fs } from '../../../lib/builtins.js';

/**
 * libpq's verifying TLS for the exporter's URL: `sslmode=verify-full` (or `verify-ca`) against
 * the CA file named by `sslrootcert`, and `hostaddr`: connect to that address while the
 * certificate is checked against the URL's host name (a pod's name under its headless Service,
 * which its address is not, and which then needs no DNS). node-postgres alone would check the
 * name it connects to and read the CA once; here the CA file is read again for every new
 * connection, so a CA rotation's new bundle is trusted without a restart.
 */

export interface PoolTarget {
  /** The URL without the parameters handled here (node-postgres would override `ssl` from them). */
  connectionString: string;
  ssl?: ConnectionOptions;
}

const verifyingModes = new Set(['verify-full', 'verify-ca']);

function urlError(message: string): Error {
  return new Error(`invalid PostgreSQL URL: ${message}`);
}

/** Where and how a pool connects for `url` (a postgres:// URL already checked by normalizeUrl). */
export function poolTarget(url: string): PoolTarget {
  const parsed = new URL(url);
  const mode = parsed.searchParams.get('sslmode');
  const hostaddr = parsed.searchParams.get('hostaddr');
  if (mode === null || !verifyingModes.has(mode)) {
    if (hostaddr !== null) throw urlError('hostaddr needs sslmode=verify-full or verify-ca');
    return { connectionString: url };
  }
  const rootCert = parsed.searchParams.get('sslrootcert');
  if (!rootCert) throw urlError(`sslmode=${mode} needs sslrootcert, the CA file the server's certificate is checked with`);
  if (hostaddr !== null && !isIP(hostaddr)) throw urlError(`hostaddr must be an IP address, got "${hostaddr.slice(0, 64)}"`);
  const serverName = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!serverName) throw urlError(`sslmode=${mode} needs a host name to check the certificate against`);
  for (const key of ['sslmode', 'sslrootcert', 'hostaddr']) parsed.searchParams.delete(key);
  if (hostaddr !== null) parsed.hostname = isIP(hostaddr) === 6 ? `[${hostaddr}]` : hostaddr;
  const ssl: ConnectionOptions = {
    rejectUnauthorized: true,
    // SNI and the identity check take the name; an IP address is checked by node-postgres itself.
    ...(isIP(serverName) ? {} : { servername: serverName }),
    ...(mode === 'verify-ca' ? { checkServerIdentity: () => undefined } : {}),
  };
  // node-postgres copies these options (Object.assign) when it starts each TLS session: the getter reads the file then.
  Object.defineProperty(ssl, 'ca', { enumerable: true, get: () => fs.readFileSync(rootCert, 'utf8') });
  return { connectionString: parsed.toString(), ssl };
}
