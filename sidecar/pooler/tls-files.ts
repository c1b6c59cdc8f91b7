/**
 * PgBouncer's TLS files, from the cluster's mounted server TLS Secret (tls.crt, tls.key, ca.crt):
 * copied into the run folder (0600, owned by the account PgBouncer runs as), so clients reach the
 * pooler over TLS with the cluster's server certificate (which names the pooler Services) and
 * PgBouncer checks the PostgreSQL server's certificate against the cluster CA. A change of the
 * mounted files is copied again and PgBouncer RELOADed (it re-reads its TLS files then); material
 * whose key does not match its certificate is never copied.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { chownSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PoolerTlsFiles {
  cert: string;
  key: string;
  ca: string;
}

export function poolerTlsFiles(runDir: string): PoolerTlsFiles {
  return { cert: join(runDir, 'tls.crt'), key: join(runDir, 'tls.key'), ca: join(runDir, 'ca.crt') };
}

/**
 * Copies the mounted files when they differ from `previousDigest` and hold together: the new
 * digest, `previousDigest` when nothing changed, or why nothing was copied.
 */
export function installPoolerTls(
  sourceDir: string,
  runDir: string,
  runAs: { uid: number; gid: number } | undefined,
  previousDigest?: string,
): { digest: string } | { problem: string } {
  let material: { cert: string; key: string; ca: string };
  try {
    material = {
      cert: readFileSync(join(sourceDir, 'tls.crt'), 'utf8'),
      key: readFileSync(join(sourceDir, 'tls.key'), 'utf8'),
      ca: readFileSync(join(sourceDir, 'ca.crt'), 'utf8'),
    };
  } catch (error) {
    return { problem: `the TLS files in ${sourceDir} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    if (!new X509Certificate(material.cert).checkPrivateKey(createPrivateKey(material.key))) return { problem: 'the TLS key does not match its certificate' };
  } catch (error) {
    return { problem: `the TLS certificate or key cannot be read (${(error as Error).message.slice(0, 100)})` };
  }
  const digest = createHash('sha256').update(JSON.stringify(material)).digest('hex');
  if (digest === previousDigest) return { digest };
  const files = poolerTlsFiles(runDir);
  for (const [path, content] of [
    [files.cert, material.cert],
    [files.key, material.key],
    [files.ca, material.ca],
  ] as const) {
    writeFileSync(`${path}.new`, content, { mode: 0o600 });
    if (runAs) chownSync(`${path}.new`, runAs.uid, runAs.gid);
    renameSync(`${path}.new`, path);
  }
  return { digest };
}

/**
 * The [pgbouncer] TLS settings: clients may use TLS (plaintext clients still connect until the
 * cluster requires TLS), and PgBouncer's own connections use it, checking the server's certificate
 * against the cluster CA. verify-ca, not verify-full: PgBouncer reaches PostgreSQL by the pod's
 * address, which the certificate does not name.
 */
export function poolerTlsSettings(files: PoolerTlsFiles): Record<string, string> {
  return {
    client_tls_sslmode: 'prefer',
    client_tls_cert_file: files.cert,
    client_tls_key_file: files.key,
    server_tls_sslmode: 'verify-ca',
    server_tls_ca_file: files.ca,
  };
}
