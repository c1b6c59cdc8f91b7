import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { stopBySignal } from '../../../../sidecar/ha-node/postgres/signal-stop.js';
import { pgBin, startPostgres } from '../../../support/postgres.js';

/**
 * The postmaster stopped by its signal, its pid file watched (what a switchover waits for): a
 * fast stop is a clean shutdown (pg_control says so, the shutdown checkpoint is there for the
 * release), an immediate one is not, and a postmaster already gone counts as stopped.
 */
const run = promisify(execFile);
const clusterState = async (dataDir: string) =>
  /Database cluster state:\s+(.+)/
    .exec((await run(join(pgBin, 'pg_controldata'), ['-D', dataDir], { env: { ...process.env, LC_ALL: 'C' } })).stdout)?.[1]
    ?.trim();
const postmasterPid = (dataDir: string) => Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

describe('stopBySignal', { timeout: 120_000 }, () => {
  it('fast: a clean shutdown, the pid file gone when it answers', async () => {
    const server = await startPostgres();
    try {
      await server.query('CREATE TABLE t AS SELECT 1 AS x');
      assert.equal(await stopBySignal(server.dataDir, postmasterPid(server.dataDir), 'fast', 30_000), true);
      assert.equal(existsSync(join(server.dataDir, 'postmaster.pid')), false);
      assert.equal(await clusterState(server.dataDir), 'shut down');
      // Nothing left to stop: already gone counts as stopped.
      assert.equal(await stopBySignal(server.dataDir, 2 ** 22 + 12345, 'fast', 1_000), true);
    } finally {
      await server.stop();
    }
  });

  it('immediate: stops without a shutdown checkpoint', async () => {
    const server = await startPostgres();
    try {
      assert.equal(await stopBySignal(server.dataDir, postmasterPid(server.dataDir), 'immediate', 30_000), true);
      assert.equal(existsSync(join(server.dataDir, 'postmaster.pid')), false);
      assert.equal(await clusterState(server.dataDir), 'in production');
    } finally {
      await server.stop();
    }
  });
});
