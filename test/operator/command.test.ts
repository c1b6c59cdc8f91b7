import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCrds, eventually } from './support.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

interface Operator {
  child: ChildProcessByStdio<null, Readable, Readable>;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr together, in the order they arrived. */
  output(): string;
}

/** `keelson operator` as a process: flags, WATCH_NAMESPACE, probes, and exit codes. */
describe('keelson operator (CLI)', () => {
  let server: TestApiServer;
  let dir: string;
  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-operator-cli-'));
    await applyCrds(server.kubeconfigPath, join(dir, 'kcache'));
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** `keelson operator` with these flags against the test API server; output collected as it arrives. */
  function startOperator(flags: string[], env: NodeJS.ProcessEnv = process.env): Operator {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', 'operator', '--kubeconfig', server.kubeconfigPath, ...flags], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { child, exited, stdout: () => stdout, stderr: () => stderr, output: () => output };
  }

  it('refuses a bad flag value with a clear message and exit 1', async () => {
    const operator = startOperator(['--relist-interval', 'soon']);
    assert.equal(await operator.exited, 1);
    assert.match(operator.stderr(), /--relist-interval must be a number of seconds/);
    const propagation = startOperator(['--ca-trust-propagation', '-5']);
    assert.equal(await propagation.exited, 1);
    assert.match(propagation.stderr(), /--ca-trust-propagation must be a number of seconds >= 0/);
  });

  it('refuses Lease timings a leader could not keep (renew deadline not shorter than the lease)', async () => {
    const operator = startOperator(['--leader-election-lease-duration', '5', '--leader-election-renew-deadline', '5']);
    assert.equal(await operator.exited, 1);
    assert.match(operator.stderr(), /--leader-election-renew-deadline must be shorter than --leader-election-lease-duration/);
  });

  const probeFlags = ['--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0'];

  it('exits non-zero when an API outage outlasts its renew deadline, so the Deployment starts a fresh process', async () => {
    const operator = startOperator(
      [
        ...probeFlags,
        '--leader-election-name',
        'cli-lost',
        '--leader-election-lease-duration',
        '2',
        '--leader-election-renew-deadline',
        '1.5',
        '--leader-election-retry-period',
        '0.2',
      ],
      { ...process.env, POD_NAMESPACE: 'default', POD_NAME: 'cli-lost', LOG_LEVEL: 'info' },
    );
    try {
      await eventually('leading', async () => /became leader/.test(operator.output()), 20_000);
      server.faults.pause('unavailable');
      const code = await Promise.race([operator.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 10_000))]);
      assert.equal(code, 1, 'exit code after the lost Lease');
      assert.match(operator.output(), /leadership lost; exiting/);
    } finally {
      server.faults.resume();
      operator.child.kill('SIGKILL');
    }
  });

  it('serves /healthz and /readyz, leads, and exits 0 on SIGTERM after releasing the Lease', async () => {
    const { child, exited, stdout } = startOperator([...probeFlags, '--leader-election-name', 'cli-test'], {
      ...process.env,
      WATCH_NAMESPACE: 'default,other',
      POD_NAMESPACE: 'default',
      POD_NAME: 'cli-operator',
      LOG_LEVEL: 'info',
    });
    try {
      const urls = await eventually(
        'two listening lines',
        async () => {
          const found = [...stdout().matchAll(/"url":"(http:\/\/[^"]+)","msg":"listening"/g)].map((m) => m[1]!);
          return found.length >= 2 ? found : undefined;
        },
        20_000,
      );
      const health = await eventually('a /healthz answer', async () => {
        for (const url of urls) if ((await fetch(`${url}/healthz`).catch(() => undefined))?.status === 200) return url;
        return undefined;
      });
      await eventually('ready as leader', async () => (await fetch(`${health}/readyz`)).status === 200 && /became leader/.test(stdout()), 20_000);
      await eventually('watching the namespaces from WATCH_NAMESPACE', async () => /"namespaces":\["default","other"\]/.test(stdout()));
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    const { CoordinationV1Api } = await import('@kubernetes/client-node');
    const lease = await server.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: 'default', name: 'cli-test' });
    assert.ok(!lease.spec?.holderIdentity, 'the Lease was released on shutdown');
  });
});
