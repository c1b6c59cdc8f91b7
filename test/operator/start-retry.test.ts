import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCrds, eventually } from './support.js';

describe('operator started before its CRD is installed', () => {
  let server: TestApiServer;
  let operator: RunningOperator;
  let dir: string;
  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-start-retry-'));
  });
  after(async () => {
    await operator?.stop();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is not ready and says why, then starts once the CRD appears', async () => {
    operator = await runOperator({
      kubeconfig: server.kubeconfigPath,
      namespaces: [],
      leaderElect: false,
      leaseNamespace: 'default',
      leaseName: 'x',
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      relistIntervalMs: 60_000,
      operatorVersion: 'test',
      logger: createLogger({ name: 'start-retry', level: 'silent' }),
    });
    const detail = await eventually('readyz 503', async () => {
      const res = await fetch(`${operator.healthUrl}/readyz`);
      const text = await res.text();
      return res.status === 503 && /controller failed to start/.test(text) ? text : undefined;
    });
    assert.match(detail, /controller failed to start/);
    await applyCrds(server.kubeconfigPath, join(dir, 'kcache'));
    await eventually('readyz 200 after the CRD is installed', async () => (await fetch(`${operator.healthUrl}/readyz`)).status === 200, 15_000);
  });
});
