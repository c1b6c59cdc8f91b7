import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * A real S3 server for tests: s3rver on 127.0.0.1 with TLS (a self-signed certificate made here for
 * the name "localhost", so pgBackRest verifies it against the CA file), path-style buckets, one
 * fresh bucket per server and a unique path prefix per caller. s3rver checks request signatures
 * against its fixed key pair (S3RVER/S3RVER), so wrong credentials are refused as on real S3.
 */
interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export const s3Credentials = { key: 'S3RVER', secretKey: 'S3RVER' } as const;

export interface TestS3 {
  endpoint: 'localhost';
  port: number;
  bucket: string;
  region: string;
  /** PEM of the server's self-signed certificate (its own CA). */
  caFile: string;
  /** Files holding the access key and secret key, readable by the PostgreSQL account. */
  keyFile: string;
  secretKeyFile: string;
  dir: string;
  /** A path prefix no other test uses: a stale stanza would make stanza-create fail. */
  uniquePath(name: string): string;
  /** A repository entry for KEELSON_BACKUP. */
  repository(path: string): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startS3(): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-s3-'));
  chmodSync(dir, 0o755);
  const keyPem = join(dir, 'key.pem');
  const certPem = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyPem,
      '-out',
      certPem,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  chmodSync(certPem, 0o644);
  const keyFile = join(dir, 'access-key');
  const secretKeyFile = join(dir, 'secret-key');
  writeFileSync(keyFile, `${s3Credentials.key}\n`, { mode: 0o644 });
  writeFileSync(secretKeyFile, `${s3Credentials.secretKey}\n`, { mode: 0o644 });
  const bucket = `keelson-${randomBytes(4).toString('hex')}`;
  const storage = join(dir, 'objects');
  mkdirSync(storage);
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: storage,
    vhostBuckets: false,
    key: readFileSync(keyPem),
    cert: readFileSync(certPem),
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  let counter = 0;
  return {
    endpoint: 'localhost',
    port,
    bucket,
    region: 'us-east-1',
    caFile: certPem,
    keyFile,
    secretKeyFile,
    dir,
    uniquePath: (name) => `/${name}-${process.pid}-${Date.now().toString(36)}-${(counter += 1)}`,
    repository(path) {
      return {
        kind: 's3',
        bucket,
        endpoint: 'localhost',
        port,
        region: 'us-east-1',
        path,
        uriStyle: 'path',
        verifyTls: true,
        caFile: certPem,
        keyFile,
        secretKeyFile,
      };
    },
    async close() {
      await server.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
