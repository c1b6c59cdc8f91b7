import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { freePort } from '../support/ports.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { kubectl } from '../operator/support.js';
import { renderChart } from './render.js';

/**
 * The `helm test` hook's container, run as rendered against a real operator process (the stand-in
 * node agent cannot resolve the Service's DNS name, so the one change is the URL's host and port).
 */
interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runContainer(container: V1Container, env: Record<string, string>): Promise<Exit> {
  const [command, ...commandArgs] = container.command!;
  const child = spawn(command!, [...commandArgs, ...(container.args ?? [])], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('charts/keelson helm test hook', () => {
  let server: TestApiServer;
  let operator: ChildProcess | undefined;
  let dir: string;
  let metricsPort: number;
  const pod = renderChart().find((d) => d.kind === 'Pod' && d.metadata.annotations?.['helm.sh/hook'] === 'test') as unknown as V1Pod;
  const container = pod.spec!.containers[0]!;
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? '']));

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-test-hook-'));
    await kubectl(server.kubeconfigPath, join(dir, 'kcache'), 'apply', '--server-side', '-f', 'crds/');
    metricsPort = await freePort();
    const healthPort = await freePort();
    operator = spawn(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', 'operator', '--kubeconfig', server.kubeconfigPath, '--no-leader-elect',
      `--health-address=127.0.0.1:${healthPort}`, `--metrics-address=127.0.0.1:${metricsPort}`], { env: { PATH: process.env.PATH ?? '', HOME: dir, LOG_LEVEL: 'warn' }, stdio: 'ignore' });
  });
  after(async () => {
    if (operator && operator.exitCode === null) {
      const exited = new Promise((resolve) => operator!.once('exit', resolve));
      operator.kill('SIGTERM');
      await exited;
    }
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('succeeds once the operator answers on its metrics endpoint', async () => {
    const url = new URL(env.OPERATOR_METRICS_URL!);
    const local = `http://127.0.0.1:${metricsPort}${url.pathname}`;
    const result = await runContainer(container, { ...env, OPERATOR_METRICS_URL: local });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`the operator answers at ${local}`));
  });

  it('fails with the reason when nothing answers within its timeout', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/metrics`;
    const result = await runContainer(container, { ...env, OPERATOR_METRICS_URL: closed, TIMEOUT_SECONDS: '1' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`the operator does not answer at ${closed}: .*ECONNREFUSED`));
  });
});
