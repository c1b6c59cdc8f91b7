import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.js';
import { group, plural, version } from '../../api/crd/types.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCrds, eventually } from './support.js';

const ns = 'db';
const logger = createLogger({ name: 'lost-leadership-test', level: process.env.LOG_LEVEL ?? 'silent' });
const fast = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 200 };

/**
 * The operator embedded in another process (as `keelson local up` runs it) has no process exit
 * to fall back on: after an API outage longer than its renew deadline it must lead again with a
 * working controller and act on spec changes.
 */
describe('embedded operator after losing and regaining leadership', () => {
  let server: TestApiServer;
  let api: OperatorKubeApi;
  let operator: RunningOperator;
  let cacheDir: string;

  const replicas = async (): Promise<number | undefined> =>
    (await api.read<V1StatefulSet>({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'demo', namespace: ns } }))?.spec?.replicas;

  before(async () => {
    server = await startTestApiServer();
    cacheDir = mkdtempSync(join(tmpdir(), 'keelson-lost-leadership-'));
    api = new OperatorKubeApi(server.kubeConfig);
    await applyCrds(server.kubeconfigPath, cacheDir);
    await api.core.createNamespace({ body: { metadata: { name: ns } } });
    operator = await runOperator({
      kubeconfig: server.kubeconfigPath,
      namespaces: [ns],
      leaderElect: true,
      leaseNamespace: 'default',
      leaseName: 'embedded',
      identity: 'embedded-operator',
      leaderTimings: fast,
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      relistIntervalMs: 60_000,
      operatorVersion: '0.0.0-test',
      logger,
    });
  });
  after(async () => {
    server?.faults.resume();
    await operator?.stop();
    await server?.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('reconciles a spec change made after an API outage longer than the renew deadline', async () => {
    await eventually('leadership', async () => operator.isLeader());
    await api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name: 'demo' }, spec: { instances: 1 } },
    });
    assert.equal(await eventually('StatefulSet with 1 replica', replicas), 1);

    server.faults.pause('unavailable');
    try {
      await eventually('leadership lost during the outage', async () => !operator.isLeader(), 8_000);
    } finally {
      server.faults.resume();
    }
    await eventually('leadership regained', async () => operator.isLeader(), 8_000);
    await eventually('ready again with synced caches', async () => (await fetch(`${operator.healthUrl}/readyz`)).status === 200, 10_000);

    await api.custom.patchNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'demo',
      body: [{ op: 'replace', path: '/spec/instances', value: 2 }],
    });
    assert.equal(await eventually('StatefulSet scaled to 2 by the new term', async () => ((await replicas()) === 2 ? 2 : undefined), 10_000), 2);
  });
});
