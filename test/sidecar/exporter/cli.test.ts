import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { freePort, waitForPort } from '../../support/ports.js';
import { runKeelson } from '../../support/run-process.js';
import { get, parseMetrics, sharedConfigFile, valueOf } from './helpers.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG_EXPORTER_') && k !== 'PGURL'));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function keelson(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return runKeelson(['exporter', ...args], { cwd: repoRoot, env: { ...cleanEnv, LOG_LEVEL: 'warn', ...env } });
}

const synopsisCount = (text: string) => text.split('\n').filter((l) => l === '# SYNOPSIS').length;

describe('keelson exporter command line', () => {
  let pg: TestPostgres;
  let dir: string;

  before(async () => {
    pg = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'keelson-exporter-cli-'));
  });

  after(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--dry-run prints every configured collector without a database', async () => {
    const shared = await keelson(['--dry-run', '--config', sharedConfigFile, '--url', 'postgres://u:p@127.0.0.1:1/db']);
    assert.equal(shared.code, 0, shared.stderr);
    assert.equal(synopsisCount(shared.stdout), 96);
    const builtin = await keelson(['--dry-run']);
    assert.equal(builtin.code, 0, builtin.stderr);
    assert.match(builtin.stdout, /Source {5}keelson-server\.yml/);
  });

  it('a bad config exits 1 with the file, collector and field in the message', async () => {
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, 'mine:\n  query: SELECT 1 AS v\n  timeout: fast\n  metrics:\n    - v: { usage: GAUGE }\n');
    const result = await keelson(['--dry-run', '-c', bad]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /bad\.yml: collector "mine": field "timeout": must be a number/);
  });

  it('flag errors: a telemetry path on a built-in route exits 1, an unknown flag exits 2', async () => {
    const clash = await keelson(['--dry-run', '--web.telemetry-path', '/up']);
    assert.equal(clash.code, 1);
    assert.match(clash.stderr, /web\.telemetry-path.*clashes with a built-in endpoint/);
    assert.equal((await keelson(['--no-such-flag'])).code, 2);
  });

  it('--fail-fast exits 1 when the server cannot be reached', async () => {
    const port = await freePort();
    const result = await keelson(['--fail-fast', '--web.listen-address', `127.0.0.1:${await freePort()}`], {
      PG_EXPORTER_URL: `postgres://u:p@127.0.0.1:${port}/postgres`,
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /fail-fast: cannot reach the server/);
  });

  it('--explain connects, plans for the server and prints only the installed collectors', async () => {
    const result = await keelson(['--explain', '--connect-timeout', '2000'], { PG_EXPORTER_URL: pg.url, PG_EXPORTER_CONFIG: sharedConfigFile });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /pg\.pg_primary_only_\*/);
    assert.doesNotMatch(result.stdout, /pg_replica_only_\*/);
    assert.doesNotMatch(result.stdout, /pg_query_13/, 'no pg_stat_statements extension here');
    assert.equal(synopsisCount(result.stdout), 37);
  });

  it('serves until SIGTERM, taking the URL from PG_EXPORTER_URL; SIGHUP reloads', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/keelson.ts',
        'exporter',
        '--web.listen-address',
        `127.0.0.1:${port}`,
        '-T',
        '2000',
        '--label',
        'pod=db-0',
        '--log.format',
        'logfmt',
        '--disable-cache=false',
      ],
      {
        cwd: repoRoot,
        env: { ...cleanEnv, PG_EXPORTER_URL: pg.url, LOG_LEVEL: 'info' },
      },
    );
    let logs = '';
    child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitForPort('127.0.0.1', port, 20_000);
      const metrics = parseMetrics((await get(`http://127.0.0.1:${port}/metrics`)).body);
      assert.equal(valueOf(metrics, 'pg_up'), 1);
      assert.equal(metrics.families.get('pg_up')?.metrics[0].labels?.pod, 'db-0');
      child.kill('SIGHUP');
      for (let i = 0; i < 40 && !logs.includes('collector configuration reloaded'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(logs, /collector configuration reloaded/);
      assert.doesNotMatch(logs, /secret|keelson-test/, 'the password never reaches the log');
      assert.match(logs, /"msg":"--log.format logfmt is not supported; logging JSON lines"/);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});
