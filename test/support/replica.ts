import { spawn } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { pgBin, type TestPostgres } from './postgres.js';

/** A streaming replica of a startPostgres() primary (which needs wal_level=replica, the default). */
export interface TestReplica {
  host: string;
  port: number;
  dataDir: string;
  url: string;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string): Promise<pg.QueryResult<T>>;
  /** Restarts with extra postgresql.conf lines (e.g. hot_standby = off). */
  restartWith(settings: Record<string, string>): Promise<void>;
  start(): Promise<void>;
  stopServer(): Promise<void>;
  stop(): Promise<void>;
}

function run(file: string, args: string[], primary: TestPostgres, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const runAs = primary.runAs;
    const child = spawn(file, args, {
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      env: { ...process.env, HOME: tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${output}`))));
  });
}

/** pg_basebackup -R from the primary into a temp folder, started on a free port. */
export async function startReplica(primary: TestPostgres): Promise<TestReplica> {
  const host = primary.host;
  const port = await freePort(host);
  const baseDir = mkdtempSync(join(tmpdir(), 'keelson-replica-'));
  const dataDir = join(baseDir, 'data');
  const logFile = join(baseDir, 'server.log');
  if (primary.runAs) chownSync(baseDir, primary.runAs.uid, primary.runAs.gid);
  await run(
    join(pgBin, 'pg_basebackup'),
    ['-h', host, '-p', String(primary.port), '-U', primary.superuser, '-D', dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    primary,
    { PGPASSWORD: primary.password },
  );
  appendFileSync(join(dataDir, 'postgresql.conf'), `port = ${port}\nunix_socket_directories = '${baseDir}'\nhot_standby = on\n`);
  const url = `postgres://${encodeURIComponent(primary.superuser)}:${encodeURIComponent(primary.password)}@${host}:${port}/postgres`;
  const replica: TestReplica = {
    host,
    port,
    dataDir,
    url,
    async query(sql) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return await client.query(sql);
      } finally {
        await client.end();
      }
    },
    async start() {
      await run(join(pgBin, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'], primary);
    },
    async stopServer() {
      if (existsSync(join(dataDir, 'postmaster.pid')))
        await run(join(pgBin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop'], primary).catch(() => undefined);
    },
    async restartWith(settings) {
      await replica.stopServer();
      const conf = join(dataDir, 'postgresql.auto.conf');
      appendFileSync(
        conf,
        Object.entries(settings)
          .map(([k, v]) => `${k} = ${v}`)
          .join('\n') + '\n',
      );
      await replica.start();
    },
    async stop() {
      await replica.stopServer();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
  await replica.start();
  return replica;
}
