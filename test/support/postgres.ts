import { execFile, spawn, type SpawnOptions } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync, appendFileSync, existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** Directory of the PostgreSQL 15 server binaries (PG_BIN overrides). */
export const pgBin = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * PostgreSQL refuses to run as root. When the tests run as root (CI does), the server runs as the
 * `postgres` system user that Debian's packages create; otherwise as the current user.
 */
export interface RunAs {
  uid: number;
  gid: number;
  user: string;
}

export async function postgresRunAs(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()), user: 'postgres' };
}

export interface PostgresOptions {
  host?: string;
  port?: number;
  /** Extra lines for postgresql.conf. */
  settings?: Record<string, string | number | boolean>;
  superuser?: string;
  password?: string;
  /** Start the server (default true); false only runs initdb. */
  start?: boolean;
}

export interface TestPostgres {
  host: string;
  port: number;
  dataDir: string;
  /** Parent temp folder holding dataDir and the server log. */
  baseDir: string;
  superuser: string;
  password: string;
  url: string;
  runAs?: RunAs;
  /** A connection URL for another database on the same server. */
  urlFor(database: string): string;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<T>>;
  start(): Promise<void>;
  /** pg_ctl stop -m fast; the data folder stays. */
  stopServer(): Promise<void>;
  /** Stops the server and deletes every file it made. */
  stop(): Promise<void>;
}

function spawnOptions(runAs?: RunAs): SpawnOptions {
  return runAs ? { uid: runAs.uid, gid: runAs.gid, env: { ...process.env, HOME: tmpdir() } } : {};
}

async function exec(file: string, args: string[], runAs?: RunAs): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...spawnOptions(runAs), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${output}`))));
  });
}

/** A throwaway PostgreSQL 15 in a temp folder on a free loopback port. Call stop() when done. */
export async function startPostgres(options: PostgresOptions = {}): Promise<TestPostgres> {
  const runAs = await postgresRunAs();
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const superuser = options.superuser ?? 'postgres';
  const password = options.password ?? 'keelson-test';
  const baseDir = mkdtempSync(join(tmpdir(), 'keelson-pg-'));
  const dataDir = join(baseDir, 'data');
  const logFile = join(baseDir, 'server.log');
  const pwFile = join(baseDir, 'pwfile');
  writeFileSync(pwFile, `${password}\n`);
  if (runAs) {
    chownSync(baseDir, runAs.uid, runAs.gid);
    chownSync(pwFile, runAs.uid, runAs.gid);
  }
  await exec(
    join(pgBin, 'initdb'),
    ['-D', dataDir, '-U', superuser, `--pwfile=${pwFile}`, '-A', 'scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    runAs,
  );
  const settings: Record<string, string | number | boolean> = {
    listen_addresses: `'${host}'`,
    port,
    unix_socket_directories: `'${baseDir}'`,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: 50,
    shared_buffers: `'32MB'`,
    ...options.settings,
  };
  appendFileSync(
    join(dataDir, 'postgresql.conf'),
    Object.entries(settings)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n') + '\n',
  );
  appendFileSync(join(dataDir, 'pg_hba.conf'), `host all all 127.0.0.0/8 scram-sha-256\nhost replication all 127.0.0.0/8 scram-sha-256\n`);

  const url = `postgres://${encodeURIComponent(superuser)}:${encodeURIComponent(password)}@${host}:${port}/postgres`;
  const instance: TestPostgres = {
    host,
    port,
    dataDir,
    baseDir,
    superuser,
    password,
    url,
    runAs,
    urlFor: (database) => `postgres://${encodeURIComponent(superuser)}:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(database)}`,
    async query(sql, params) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return await client.query(sql, params);
      } finally {
        await client.end();
      }
    },
    async start() {
      await exec(join(pgBin, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'], runAs);
    },
    async stopServer() {
      if (existsSync(join(dataDir, 'postmaster.pid'))) {
        await exec(join(pgBin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop'], runAs).catch(() => undefined);
      }
    },
    async stop() {
      await instance.stopServer();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
  if (options.start !== false) await instance.start();
  return instance;
}

/** The name tests may show in messages for the account PostgreSQL runs as. */
export async function postgresUserName(): Promise<string> {
  return (await postgresRunAs())?.user ?? userInfo().username;
}

/**
 * SQL selecting the timeline a primary writes WAL on, as `alias` (0 while in recovery). A just
 * promoted server's pg_control_checkpoint() still names the old timeline until its end-of-recovery
 * checkpoint completes, which runs in the background after the promotion.
 */
export function currentTimelineSql(alias: string): string {
  return `CASE WHEN pg_is_in_recovery() THEN 0 ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS ${alias}`;
}
