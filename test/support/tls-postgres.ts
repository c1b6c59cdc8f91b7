import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate, type PemPair } from '../../lib/tls-certificates.js';
import { startPostgres, type TestPostgres } from './postgres.js';

/** The names a member of cluster `shop` in namespace `default` serves as (operator/certificates/server-names.ts, shortened). */
export const shopPeerSuffix = 'shop-headless.default.svc';

/**
 * A real PostgreSQL serving a server certificate `ca` signed for `shop-rw` and every pod under
 * the headless Service, as the operator issues one. With `tlsOnly`, pg_hba refuses every TCP
 * session without TLS (`hostnossl … reject`), so a client that does not use TLS fails.
 */
export async function startTlsPostgres(ca: PemPair, options: { tlsOnly?: boolean } = {}): Promise<TestPostgres> {
  const pg = await startPostgres({ start: false, settings: { ssl: 'on', ssl_cert_file: `'server.crt'`, ssl_key_file: `'server.key'` } });
  const pair = issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: ['shop-rw', `*.${shopPeerSuffix}`] });
  const files: [string, string, number][] = [
    ['server.crt', pair.cert, 0o644],
    ['server.key', pair.key, 0o600],
  ];
  if (options.tlsOnly) files.push(['pg_hba.conf', 'local all all trust\nhostnossl all all 0.0.0.0/0 reject\nhostssl all all 0.0.0.0/0 scram-sha-256\n', 0o600]);
  for (const [file, content, mode] of files) {
    writeFileSync(join(pg.dataDir, file), content, { mode });
    if (pg.runAs) chownSync(join(pg.dataDir, file), pg.runAs.uid, pg.runAs.gid);
  }
  await pg.start();
  return pg;
}
