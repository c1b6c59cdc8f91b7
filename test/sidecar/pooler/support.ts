import { chmodSync, chownSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createLogger } from '../../../lib/log.js';
import type { ApiCredentials } from '../../../api/ha-node/credentials.js';
import { startPooler, type RunningPooler } from '../../../sidecar/pooler/run.js';
import { freePort } from '../../support/ports.js';
import { postgresRunAs } from '../../support/postgres.js';

/** A real `keelson pooler` (PgBouncer 1.18 from Debian) on 127.0.0.1, pointed at a PostgreSQL server. */
export interface TestPooler {
  running: RunningPooler;
  host: string;
  port: number;
  controlPort: number;
  /** A client of the pooler, as an application connects. */
  client(user: string, password: string, database: string): Promise<pg.Client>;
}

export function poolerPasswordFile(dir: string, password: string): string {
  const path = join(dir, 'pooler-password');
  writeFileSync(path, password, { mode: 0o600 });
  return path;
}

export async function startTestPooler(options: {
  baseDir: string;
  target: { host: string; port: number };
  passwordFile: string;
  credentials?: ApiCredentials;
  controlPort?: number;
  tlsDir?: string;
}): Promise<TestPooler> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const controlPort = options.controlPort ?? (await freePort(host));
  const runAs = await postgresRunAs();
  const runDir = join(options.baseDir, `pgbouncer-${port}`);
  mkdirSync(runDir, { recursive: true });
  chmodSync(options.baseDir, 0o755);
  if (runAs) chownSync(runDir, runAs.uid, runAs.gid);
  const running = await startPooler(
    {
      listenAddr: host,
      listenPort: port,
      control: { host, port: controlPort },
      runDir,
      target: options.target,
      authUser: 'keelson_pooler',
      authPasswordFile: options.passwordFile,
      poolMode: 'transaction',
      maxClientConnections: 100,
      defaultPoolSize: 5,
      parameters: {},
      pgbouncerBin: process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer',
      runAs: runAs ? { uid: runAs.uid, gid: runAs.gid } : undefined,
      ...(options.tlsDir ? { tlsDir: options.tlsDir } : {}),
    },
    options.credentials,
    createLogger({ name: 'pooler', level: process.env.POOLER_TEST_LOG_LEVEL ?? 'warn' }),
  );
  return {
    running,
    host,
    port,
    controlPort,
    async client(user, password, database) {
      const client = new pg.Client({ host, port, user, password, database, connectionTimeoutMillis: 5000, query_timeout: 15_000 });
      client.on('error', () => undefined);
      await client.connect();
      return client;
    },
  };
}

export function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), 'keelson-pooler-'));
}
