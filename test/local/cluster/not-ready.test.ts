import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runKeelson } from '../../support/run-process.js';
import { localUpDir } from './cli.js';

/**
 * A cluster that cannot become Ready: the pods' PATH lacks pgBackRest (every replica's
 * restore_command), as on a machine where it was never installed. The prerequisites check looks
 * at the real PATH (KEELSON_PREREQUISITES_PATH), so `local up` starts and has to tell the user why
 * it waits, then give up at its deadline with a non-zero exit and every pod that is not Ready.
 */
describe('keelson local up on a cluster that cannot become Ready', { timeout: 240_000 }, () => {
  const dir = localUpDir('keelson-not-ready-');
  const bin = mkdtempSync(join(tmpdir(), 'keelson-path-'));
  after(() => rmSync(bin, { recursive: true, force: true }));
  for (const name of readdirSync('/usr/bin')) if (name !== 'pgbackrest') symlinkSync(join('/usr/bin', name), join(bin, name));

  it('names the pod, its container and the last error line, and exits non-zero at its deadline', async () => {
    const started = Date.now();
    const result = await runKeelson(
      ['local', 'up', '--dir', dir, '--instances', '2', '--detach', '--timeout', '50', '--ip-prefix', '127.0.47', '--network', 'loopback'],
      {
        timeoutMs: 200_000,
        env: { ...process.env, PATH: `${bin}:/usr/sbin:/sbin`, KEELSON_PREREQUISITES_PATH: '/usr/bin:/usr/sbin:/bin:/sbin' },
      },
    );
    const output = `${result.stdout}${result.stderr}`;
    const elapsed = (Date.now() - started) / 1000;
    assert.notEqual(result.code, 0, output);
    // While waiting: the replica is named with its container and the error that keeps it from streaming.
    assert.match(output, /^ {2}pod demo-1, container postgres: (restarting|not ready for \d+ s);.*last error: .*(pgbackrest|not found|restore)/m, output);
    // At the deadline: the summary of every pod that is not Ready, and the way out.
    assert.match(output, /cluster demo is not Ready by the deadline/, output);
    assert.match(output, /pods not Ready:\n {2}pod demo-1, container postgres: /, output);
    assert.match(output, /local up stopped \(exit code 1\) before the cluster was Ready/, output);
    assert.ok(elapsed < 50 + 60, `gave up at its own deadline (${elapsed.toFixed(0)} s)`);
  });
});

describe('keelson local up on a machine that lacks what the pods run', () => {
  it('stops within 2 s with exit code 2, naming the packages and the command, when it may not install', async () => {
    const started = Date.now();
    const result = await runKeelson(['local', 'up', '--dir', join(tmpdir(), 'keelson-never-started'), '--no-install', '--network', 'loopback'], {
      timeoutMs: 30_000,
      // Only PostgreSQL's own folder: pgBackRest and PgBouncer (and mount) are nowhere to be found.
      env: { ...process.env, KEELSON_PREREQUISITES_PATH: '/usr/lib/postgresql/15/bin' },
    });
    const output = `${result.stdout}${result.stderr}`;
    const seconds = (Date.now() - started) / 1000;
    assert.equal(result.code, 2, output);
    assert.match(
      output,
      // As root the stand-in also needs mount(8) for claims of a real size, which that PATH lacks too.
      /missing: pgbackrest pgbouncer( mount)? \((installing was not asked for|installing needs root)\); run: (sudo )?apt-get install -y --no-install-recommends pgbackrest pgbouncer( mount)?\n/,
    );
    assert.ok(seconds < 2 + 3, `answered in ${seconds.toFixed(1)} s (2 s, plus tsx compiling the CLI on a cold cache)`);
  });
});
