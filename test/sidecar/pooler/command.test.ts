import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PoolerPaths } from '../../../lib/ports.js';
import { loadHaNodeSettings } from '../../../sidecar/ha-node/config.js';
import { repoRoot } from '../ha-node/harness.js';
import { freePort } from '../../support/ports.js';
import { poolerPasswordFile, scratchDir } from './support.js';

/** `keelson pooler` as the pooler Deployment runs it: settings from KEELSON_POOLER_*, stopped by SIGTERM. */
describe('keelson pooler command', { timeout: 60_000 }, () => {
  it('starts PgBouncer and its control API from the environment and stops on SIGTERM', async () => {
    const dir = scratchDir();
    chmodSync(dir, 0o755);
    const port = await freePort('127.0.0.1');
    const controlPort = await freePort('127.0.0.1');
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bin/keelson.ts'), 'pooler'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        KEELSON_POOLER_LISTEN: `127.0.0.1:${port}`,
        KEELSON_POOLER_CONTROL_LISTEN: `127.0.0.1:${controlPort}`,
        KEELSON_POOLER_RUN_DIR: join(dir, 'run'),
        KEELSON_POOLER_TARGET_HOST: '127.0.0.1',
        KEELSON_POOLER_PASSWORD_FILE: poolerPasswordFile(dir, 'x'),
        KEELSON_API_PASSWORD: 'command-secret',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      let health = 0;
      while (Date.now() < deadline && health !== 200) {
        health = await fetch(`http://127.0.0.1:${controlPort}${PoolerPaths.healthz}`).then(
          (r) => r.status,
          () => 0,
        );
        if (health !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(health, 200, output);
      assert.equal((await fetch(`http://127.0.0.1:${controlPort}${PoolerPaths.state}`)).status, 401, 'the API password from the environment guards it');
      child.kill('SIGTERM');
      assert.equal(await exited, 0, output);
      assert.ok(!output.includes('command-secret') && !output.includes('"x"'), 'no secret in the log');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a malformed pooler address in ha-node settings, naming the key', () => {
    const env = { POD_NAME: 'a-0', KEELSON_CLUSTER: 'a', KEELSON_SUPERUSER_PASSWORD: 's', KEELSON_REPLICATION_PASSWORD: 'r' };
    assert.deepEqual(loadHaNodeSettings({ env: { ...env, KEELSON_POOLERS: 'a-pooler-control:8010, 127.0.0.1:9' } }).poolers, [
      'a-pooler-control:8010',
      '127.0.0.1:9',
    ]);
    assert.throws(() => loadHaNodeSettings({ env: { ...env, KEELSON_POOLERS: 'no-port' } }), /"poolers".*no-port.*host:port/);
  });
});
