import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCrds, eventually } from './support.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

  it('refuses a bad flag value with a clear message and exit 1', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bin/keelson.ts', 'operator', '--kubeconfig', server.kubeconfigPath, '--relist-interval', 'soon'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /--relist-interval must be a number of seconds/);
  });

  it('refuses Lease timings a leader could not keep (renew deadline not shorter than the lease)', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/keelson.ts',
        'operator',
        '--kubeconfig',
        server.kubeconfigPath,
        '--leader-election-lease-duration',
        '5',
        '--leader-election-renew-deadline',
        '5',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /--leader-election-renew-deadline must be shorter than --leader-election-lease-duration/);
  });

  it('exits non-zero when an API outage outlasts its renew deadline, so the Deployment starts a fresh process', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/keelson.ts',
        'operator',
        '--kubeconfig',
        server.kubeconfigPath,
        '--health-address',
        '127.0.0.1:0',
        '--metrics-address',
        '127.0.0.1:0',
        '--leader-election-name',
        'cli-lost',
        '--leader-election-lease-duration',
        '2',
        '--leader-election-renew-deadline',
        '1.5',
        '--leader-election-retry-period',
        '0.2',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, POD_NAMESPACE: 'default', POD_NAME: 'cli-lost', LOG_LEVEL: 'info' } },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await eventually('leading', async () => /became leader/.test(output), 20_000);
      server.faults.pause('unavailable');
      const code = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 10_000))]);
      assert.equal(code, 1, 'exit code after the lost Lease');
      assert.match(output, /leadership lost; exiting/);
    } finally {
      server.faults.resume();
      child.kill('SIGKILL');
    }
  });

  it('serves /healthz and /readyz, leads, and exits 0 on SIGTERM after releasing the Lease', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/keelson.ts',
        'operator',
        '--kubeconfig',
        server.kubeconfigPath,
        '--health-address',
        '127.0.0.1:0',
        '--metrics-address',
        '127.0.0.1:0',
        '--leader-election-name',
        'cli-test',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, WATCH_NAMESPACE: 'default,other', POD_NAMESPACE: 'default', POD_NAME: 'cli-operator', LOG_LEVEL: 'info' },
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const urls = await eventually(
        'two listening lines',
        async () => {
          const found = [...stdout.matchAll(/"url":"(http:\/\/[^"]+)","msg":"listening"/g)].map((m) => m[1]!);
          return found.length >= 2 ? found : undefined;
        },
        20_000,
      );
      const health = await eventually('a /healthz answer', async () => {
        for (const url of urls) if ((await fetch(`${url}/healthz`).catch(() => undefined))?.status === 200) return url;
        return undefined;
      });
      await eventually('ready as leader', async () => (await fetch(`${health}/readyz`)).status === 200 && /became leader/.test(stdout), 20_000);
      await eventually('watching the namespaces from WATCH_NAMESPACE', async () => /"namespaces":\["default","other"\]/.test(stdout));
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    const { CoordinationV1Api } = await import('@kubernetes/client-node');
    const lease = await server.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: 'default', name: 'cli-test' });
    assert.ok(!lease.spec?.holderIdentity, 'the Lease was released on shutdown');
  });
});
