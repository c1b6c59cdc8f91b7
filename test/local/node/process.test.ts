import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ContainerProcess, findContainerProcesses } from '../../../local/node/process.js';

/** pids whose command line is exactly `argv` (joined by NULs in /proc). */
function pidsRunning(argv: string[]): number[] {
  const wanted = argv.join('\0') + '\0';
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'latin1') === wanted && !readFileSync(`/proc/${entry}/stat`, 'latin1').includes(') Z ');
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The shape of PostgreSQL in a database container: the main process starts a daemon in a new
 * session (pg_ctl's postmaster), whose children start sessions of their own and drop the
 * container's environment (backends overwrite it with their process title): only the daemon
 * itself still carries the marker.
 */
describe('container teardown', { timeout: 60_000 }, () => {
  let dir: string;
  /** Every container a test starts: killed afterwards whatever the test did, so none keeps this file's process alive. */
  const started: ContainerProcess[] = [];
  const seconds = [String(40_000 + Math.floor(Math.random() * 9_000)), String(50_000 + Math.floor(Math.random() * 9_000))];
  const daemonChildren = seconds.map((s) => ['sleep', s]);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-teardown-'));
  });
  after(() => {
    for (const container of started) container.kill();
    for (const argv of daemonChildren) for (const pid of pidsRunning(argv)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('kills the unmarked children of a marked daemon when the main process dies', async () => {
    const daemon = `setsid env -i sleep ${seconds[0]} & setsid env -i sleep ${seconds[1]} & wait`;
    const container = new ContainerProcess({
      argv: ['/bin/sh', '-c', `setsid /bin/sh -c '${daemon}' & exec sleep 1000`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: dir,
      logFile: join(dir, 'log'),
      marker: `teardown-test/${process.pid}`,
    });
    started.push(container);
    const children = await waitFor('the daemon children', () => {
      const pids = daemonChildren.flatMap((argv) => pidsRunning(argv));
      return pids.length === 2 ? pids : undefined;
    });
    for (const pid of children) {
      assert.doesNotMatch(readFileSync(`/proc/${pid}/environ`, 'latin1'), /KEELSON_LOCAL_CONTAINER/, 'the child dropped the marker');
    }
    const found = findContainerProcesses(`teardown-test/${process.pid}`);
    for (const pid of children) assert.ok(found.includes(pid), `child ${pid} belongs to the container`);

    // The main process crashes: the runtime takes the whole container down with it.
    process.kill(container.pid!, 'SIGKILL');
    const exit = await container.exited;
    assert.equal(exit.signal, 'SIGKILL');
    // SIGKILL is asynchronous: give a loaded machine a moment to finish the deaths it was sent.
    let survivors = daemonChildren.flatMap((argv) => pidsRunning(argv));
    for (let i = 0; i < 40 && survivors.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      survivors = daemonChildren.flatMap((argv) => pidsRunning(argv));
    }
    assert.deepEqual(survivors, [], 'no process of the container outlives its teardown');
  });

  it('leaves processes outside the container alone', async () => {
    const container = new ContainerProcess({
      argv: ['/bin/sh', '-c', 'exec sleep 1000'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: dir,
      logFile: join(dir, 'log2'),
      marker: `teardown-test/${process.pid}-b`,
    });
    started.push(container);
    // Once the shell has become `sleep`: while a process execs, /proc/<pid>/environ reads empty for a moment.
    await waitFor('the container main process', () =>
      readFileSync(`/proc/${container.pid}/cmdline`, 'latin1') === 'sleep\u00001000\u0000' ? true : undefined,
    );
    await waitFor('the container', () => (findContainerProcesses(`teardown-test/${process.pid}-b`).length === 1 ? true : undefined));
    assert.deepEqual(findContainerProcesses(`teardown-test/${process.pid}-b`), [container.pid]);
    container.kill();
    await container.exited;
    assert.ok(process.kill(process.pid, 0), 'the test process itself is not a descendant of a container');
  });
});
