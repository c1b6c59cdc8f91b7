/**
 * Backup benchmark (not a test): pgBackRest as ha-node runs it (lz4, process-max 2, asynchronous
 * archiving, bundled repository files) against the plain PostgreSQL tools, on one PostgreSQL 15 filled by pgbench, in one run:
 *  - full backup time and size: pgBackRest full vs `pg_basebackup -Fp -X stream`;
 *  - restore to a running primary: pgBackRest restore and start with ha-node's settings for an
 *    `immediate` target (WAL fetched when asked, not ahead), vs a plain copy
 *    of the pg_basebackup folder and start (both until the server accepts writes);
 *  - WAL archive lag under a pgbench write load: the age of the oldest segment waiting for the
 *    archiver (ha_backup_archive_pending_age_seconds), sampled every 250 ms, against archive_timeout;
 *  - RPO estimate after a crash under load: seconds of WAL not yet in the archive when the
 *    postmaster is killed (kill time minus the completion time of the newest archived segment).
 * Run: node --import tsx bench/backup.ts   (SCALE=pgbench scale, 70 ≈ 1 GB; LOAD_SECONDS; ROUNDS)
 */
import { spawn } from 'node:child_process';
import { appendFileSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { archiveParameters } from '../sidecar/ha-node/backup/conf.js';
import { PgBackRest } from '../sidecar/ha-node/backup/engine.js';
import { archivePending } from '../sidecar/ha-node/backup/metrics.js';
import { recoveryParameters, replayPrefetch } from '../sidecar/ha-node/backup/restore.js';
import { parseBackupConfig } from '../api/ha-node/backup-settings.js';
import { pgBin, startPostgres, type RunAs, type TestPostgres } from '../test/support/postgres.js';
import { freePort } from '../test/support/ports.js';
import { median } from './stats.js';

const scale = Number(process.env.SCALE ?? 10);
const loadSeconds = Number(process.env.LOAD_SECONDS ?? 30);
const rounds = Number(process.env.ROUNDS ?? 2);
const archiveTimeout = 60;

function exec(file: string, args: string[], runAs: RunAs | undefined, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      env: { ...process.env, HOME: tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${output.slice(-600)}`))));
  });
}

async function timed(what: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await what();
  return (performance.now() - start) / 1000;
}

function bytesUnder(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

function ownedDir(parent: string, name: string, runAs: RunAs | undefined): string {
  const dir = join(parent, name);
  mkdirSync(dir, { mode: 0o700 });
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  return dir;
}

/** Starts a copy of the cluster from `dataDir` on its own port (no archiving) and waits until it accepts writes. */
async function startCopy(primary: TestPostgres, dataDir: string): Promise<number> {
  const port = await freePort('127.0.0.1');
  const options = `-p ${port} -c archive_mode=off -c unix_socket_directories=${primary.baseDir}`;
  return timed(async () => {
    await exec(join(pgBin, 'pg_ctl'), ['-D', dataDir, '-l', `${dataDir}.log`, '-o', options, '-w', '-t', '600', 'start'], primary.runAs);
    const client = new pg.Client({ host: '127.0.0.1', port, user: primary.superuser, password: primary.password, database: 'postgres' });
    await client.connect();
    try {
      for (;;) {
        const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
        if (!rows[0]!.r) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await client.query('CREATE TABLE restored_write_check (id int)');
    } finally {
      await client.end();
      await exec(join(pgBin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], primary.runAs);
    }
  });
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);
const mb = (bytes: number): string => `${fmt(bytes / 1048576, 1)} MB`;

async function main(): Promise<void> {
  const primary = await startPostgres({ start: false, settings: { wal_level: 'replica', max_wal_senders: 4, max_wal_size: `'1GB'`, fsync: 'on' } });
  const runAs = primary.runAs;
  const repoDir = ownedDir(primary.baseDir, 'repo', runAs);
  const config = parseBackupConfig(
    JSON.stringify({ stanza: 'bench', repositories: [{ kind: 'posix', path: repoDir }], processMax: 2, archiveTimeout, retention: { fullCount: 9 } }),
  );
  const engine = new PgBackRest({
    config,
    server: { dataDir: primary.dataDir, port: primary.port, socketDir: primary.baseDir, user: primary.superuser },
    runAs,
  });
  const pgConf = Object.entries(archiveParameters(engine.bin, engine.paths.conf, 'bench', archiveTimeout)).map(
    ([k, v]) => `${k} = '${String(v).replace(/'/g, "''")}'`,
  );
  appendFileSync(join(primary.dataDir, 'postgresql.conf'), `${pgConf.join('\n')}\n`);
  engine.writeConfig();
  await primary.start();
  const pgEnv = { PGPASSWORD: primary.password };
  const pgArgs = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', primary.superuser];
  try {
    await engine.stanzaCreate();
    process.stdout.write(`pgbench -i -s ${scale} ...\n`);
    await exec(join(pgBin, 'pgbench'), [...pgArgs, '-i', '-q', '-s', String(scale), 'postgres'], runAs, pgEnv);
    await primary.query('CHECKPOINT');
    const [{ size }] = (await primary.query<{ size: string }>('SELECT pg_database_size(current_database())::text AS size')).rows as [{ size: string }];

    const rows: {
      basebackup: number;
      pgbackrest: number;
      bbBytes: number;
      repoBytes: number;
      copy: number;
      copyStart: number;
      copySync: number;
      restore: number;
      restoreStart: number;
      restorePlain: number;
    }[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      const work = ownedDir(primary.baseDir, `round-${round}`, runAs);
      const bbDir = join(work, 'basebackup');
      const basebackup = await timed(() => exec(join(pgBin, 'pg_basebackup'), [...pgArgs, '-D', bbDir, '-Fp', '-X', 'stream', '-c', 'fast'], runAs, pgEnv));
      const bbBytes = bytesUnder(bbDir);
      const repoBefore = bytesUnder(join(repoDir, 'backup'));
      const pgbackrest = await timed(() => engine.backup('full'));
      const repoBytes = bytesUnder(join(repoDir, 'backup')) - repoBefore;
      const copyDir = join(work, 'copy');
      const copy = await timed(() => exec('cp', ['-a', bbDir, copyDir], runAs));
      // pgBackRest makes every restored file durable; cp leaves them in the page cache.
      const copySync = copy + (await timed(() => exec('sync', ['-f', copyDir], runAs)));
      const copyStart = copy + (await startCopy(primary, copyDir));
      const restoreDir = ownedDir(work, 'restore', runAs);
      // As ha-node restores to `immediate`: the files, then its recovery settings (restore.ts).
      const restore = await timed(async () => {
        const r = await engine.run(['restore', `--pg1-path=${restoreDir}`, '--type=none'], { timeoutMs: 3600_000 });
        if (r.code !== 0) throw new Error(`pgbackrest restore: ${r.output.slice(-400)}`);
        const recovery = { target: { immediate: true } };
        const settings = recoveryParameters(engine.restoreCommand({ prefetch: replayPrefetch(recovery), pgPath: restoreDir }), recovery);
        appendFileSync(
          join(restoreDir, 'postgresql.auto.conf'),
          Object.entries(settings)
            .map(([k, v]) => `${k} = '${v.replace(/'/g, "''")}'\n`)
            .join(''),
        );
        writeFileSync(join(restoreDir, 'recovery.signal'), '');
        if (runAs) for (const file of ['postgresql.auto.conf', 'recovery.signal']) chownSync(join(restoreDir, file), runAs.uid, runAs.gid);
      });
      const restoreStart = restore + (await startCopy(primary, restoreDir));
      // The same restore from an uncompressed full backup: what lz4 decompression costs.
      await engine.run(['backup', '--type=full', '--compress-type=none'], { timeoutMs: 3600_000 });
      const plainDir = ownedDir(work, 'restore-plain', runAs);
      const restorePlain = await timed(() =>
        engine.run(['restore', `--pg1-path=${plainDir}`, '--type=none'], { timeoutMs: 3600_000 }).then((r) => {
          if (r.code !== 0) throw new Error(`pgbackrest restore: ${r.output.slice(-400)}`);
        }),
      );
      rows.push({ basebackup, pgbackrest, bbBytes, repoBytes, copy, copyStart, copySync, restore, restoreStart, restorePlain });
      rmSync(work, { recursive: true, force: true });
      process.stdout.write(
        `round ${round}: basebackup ${fmt(basebackup)} s, pgbackrest ${fmt(pgbackrest)} s, copy ${fmt(copy)} (+sync ${fmt(copySync - copy)}) + start ${fmt(copyStart - copy)} s, restore ${fmt(restore)} (uncompressed ${fmt(restorePlain)}) + start ${fmt(restoreStart - restore)} s; load ${fmt(loadavg()[0]!, 1)}\n`,
      );
    }

    // Archive lag under a write load, then a crash: how much acknowledged WAL the archive lacks.
    let maxLag = 0;
    let maxSegments = 0;
    const sampler = setInterval(() => {
      const pending = archivePending(primary.dataDir);
      maxLag = Math.max(maxLag, pending.oldestAgeSeconds);
      maxSegments = Math.max(maxSegments, pending.segments);
    }, 250);
    const load = exec(join(pgBin, 'pgbench'), [...pgArgs, '-c', '4', '-j', '2', '-T', String(loadSeconds), 'postgres'], runAs, pgEnv).catch(() => '');
    // pgbench alone writes less than a segment per archive_timeout here; a bulk writer fills segments.
    const bulk = new pg.Client({ connectionString: primary.url });
    bulk.on('error', () => undefined); // the crash below ends its connection
    await bulk.connect();
    await bulk.query('CREATE TABLE bulk (id int, pad text)');
    let writing = true;
    const bulkDone = (async () => {
      while (writing) await bulk.query("INSERT INTO bulk SELECT g, repeat('x', 200) FROM generate_series(1, 50000) g").catch(() => (writing = false));
    })();
    await new Promise((r) => setTimeout(r, (loadSeconds - 3) * 1000));
    const [{ last }] = (await primary.query<{ last: string | null }>('SELECT last_archived_wal AS last FROM pg_stat_archiver')).rows as [
      { last: string | null },
    ];
    const postmaster = Number(readFileSync(join(primary.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const killedAt = Date.now();
    process.kill(postmaster, 'SIGKILL');
    writing = false;
    clearInterval(sampler);
    await Promise.all([load, bulkDone]);
    await bulk.end().catch(() => undefined);
    const completedAt = last ? statSync(join(primary.dataDir, 'pg_wal', last), { throwIfNoEntry: false })?.mtimeMs : undefined;
    const rpo = completedAt ? (killedAt - completedAt) / 1000 : Number.NaN;

    const m = (key: keyof (typeof rows)[number]) => median(rows.map((r) => r[key]));
    const lines = [
      '',
      `Backups on PostgreSQL 15, pgbench scale ${scale} (database ${mb(Number(size))}), ${rounds} round(s), medians; load average ${loadavg()
        .map((l) => fmt(l, 1))
        .join(' ')}`,
      '| measure | pgBackRest | plain tool | ratio | target |',
      '|---|---|---|---|---|',
      `| full backup time | ${fmt(m('pgbackrest'))} s | pg_basebackup -Fp ${fmt(m('basebackup'))} s | ${fmt(m('pgbackrest') / m('basebackup'))}× | ≤ 1.0× |`,
      `| backup size | ${mb(m('repoBytes'))} (lz4) | ${mb(m('bbBytes'))} | ${fmt(m('repoBytes') / m('bbBytes'))}× | |`,
      `| restore to a running primary | ${fmt(m('restoreStart'))} s | copy + start ${fmt(m('copyStart'))} s | ${fmt(m('restoreStart') / m('copyStart'))}× | ≤ 1.5× |`,
      `| of which: files in place | pgbackrest restore ${fmt(m('restore'))} s | cp -a ${fmt(m('copy'))} s | ${fmt(m('restore') / m('copy'))}× | |`,
      `| files in place, both durable | pgbackrest restore ${fmt(m('restore'))} s | cp -a + sync ${fmt(m('copySync'))} s | ${fmt(m('restore') / m('copySync'))}× | |`,
      `| files in place from an uncompressed backup | pgbackrest restore ${fmt(m('restorePlain'))} s | cp -a ${fmt(m('copy'))} s | ${fmt(m('restorePlain') / m('copy'))}× | |`,
      `| of which: start to accepting writes | ${fmt(m('restoreStart') - m('restore'))} s | ${fmt(m('copyStart') - m('copy'))} s | | |`,
      `| WAL archive lag under pgbench (${loadSeconds} s, 4 clients + a bulk writer) | max ${fmt(maxLag, 1)} s behind, ${maxSegments} segment(s) waiting | archive_timeout ${archiveTimeout} s | | ≤ archive_timeout + 10 s |`,
      `| RPO after kill -9 under load (estimate) | ${fmt(rpo, 1)} s of WAL not archived | | | |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await primary.stop().catch(() => undefined);
    rmSync(primary.baseDir, { recursive: true, force: true });
  }
}

await main();
