import assert from 'node:assert/strict';
import { mergePatch } from '../../local/controllers/kube.js';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import { group, plural, version } from '../../api/crd/types.js';
import { Controller } from '../../operator/controller.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { createOperatorMetrics } from '../../operator/metrics.js';
import { kubeConfigAs, startTestApiServer, type TestApiServer } from '../support/kube.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HaNodeClient } from '../../operator/hanode-client.js';
import { createHaNodeApp } from '../../sidecar/ha-node/api/app.js';
import { createOpsModules } from '../../sidecar/ha-node/api/ops/index.js';
import { LeaseDcs } from '../../sidecar/ha-node/dcs/lease-dcs.js';
import { memberRecord, snapshotFor } from '../sidecar/ha-node/ops/support.js';
import { applyCrds, createInstancePod, eventually } from './support.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ns = 'idle';
const logger = createLogger({ name: 'idle-reads-test', level: process.env.LOG_LEVEL ?? 'silent' });

/** Where the test pods say they are (createInstancePod): the ha-node REST API below listens there. */
const podIP = '127.255.255.254';

/**
 * What a pass over an unchanged cluster costs the API server: with the owned kinds watched, the
 * reconciler reads from the watch caches, so such a pass sends no request at all. And what it
 * costs ha-node: one GET /cluster on the primary, whose member records also say whether a restart
 * is pending (no per-pod GET /). The ha-node answering is its real REST API over a real Lease DCS
 * (members' own identities, left out of the API server count), as a running member serves it.
 */
describe('a pass over an unchanged cluster', () => {
  let server: TestApiServer;
  let api: OperatorKubeApi;
  let controller: Controller;
  let cacheDir: string;
  let counting = false;
  const requests: string[] = [];
  const haRequests: string[] = [];
  const members: LeaseDcs[] = [];
  let haServer: Server;
  const metrics = createOperatorMetrics();
  const writes = async () => (await metrics.writes.get()).values.reduce((sum, v) => sum + v.value, 0);

  before(async () => {
    server = await startTestApiServer({
      onRequest: (request) => {
        if (counting && !request.headers.authorization?.startsWith('Bearer member-')) requests.push(`${request.method} ${request.url}`);
      },
    });
    cacheDir = mkdtempSync(join(tmpdir(), 'keelson-idle-'));
    api = new OperatorKubeApi(server.kubeConfig);
    // Two members of "quiet" (ha-node's scope is the cluster name): quiet-0 holds the lock.
    for (const name of ['quiet-0', 'quiet-1']) {
      const dcs = new LeaseDcs({
        kubeConfig: kubeConfigAs(server, `member-${name}`, join(cacheDir, name)),
        namespace: ns,
        scope: 'quiet',
        name,
        ttl: () => 600,
        requestTimeoutMs: () => 3000,
        logger,
      });
      members.push(dcs);
    }
    const primaryDcs = members[0]!;
    const app = createHaNodeApp(
      { snapshot: snapshotFor('quiet-0', 'quiet', primaryDcs), dcs: primaryDcs, logger, wake: () => undefined, credentials: null },
      createOpsModules({ credentials: null }),
    );
    haServer = createServer((request, response) => {
      if (counting) haRequests.push(`${request.method} ${request.url}`);
      app(request, response);
    });
    await new Promise<void>((resolve, reject) => haServer.once('error', reject).listen(0, podIP, resolve));
    const haNode = new HaNodeClient(3000, (haServer.address() as AddressInfo).port);
    await applyCrds(server.kubeconfigPath, cacheDir);
    await api.core.createNamespace({ body: { metadata: { name: ns } } });
    for (const dcs of members) await dcs.start();
    await primaryDcs.getCluster();
    assert.equal(await primaryDcs.attemptToAcquireLeader(100), true);
    // What bootstrap stores; the operator then PATCHes its settings in once (not part of an idle pass).
    await primaryDcs.setConfig({ ttl: 30, loop_wait: 10, retry_timeout: 10 });
    await primaryDcs.touchMember(memberRecord('quiet-0', `http://${podIP}/ha`, { role: 'primary', state: 'running', xlog_location: 100 }));
    await members[1]!.touchMember(memberRecord('quiet-1', `http://${podIP}/ha`, { state: 'streaming', replication_state: 'streaming', xlog_location: 100 }));
    await primaryDcs.getCluster();
    // Relists stay out of the window: passes are driven by reconcileKey below.
    controller = new Controller({ api, metrics, logger, operatorVersion: '0.0.0-test', namespaces: [ns], relistIntervalMs: 600_000, workers: 1, haNode });
    await controller.start();
  });

  after(async () => {
    await controller?.stop();
    for (const dcs of members) dcs.stop();
    await new Promise((resolve) => (haServer ? haServer.close(resolve) : resolve(undefined)));
    await server?.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('sends no request to the API server besides its watches', async () => {
    await api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name: 'quiet' }, spec: { instances: 2 } },
    });
    await eventually(
      'the StatefulSet',
      async () => (await api.read({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'quiet', namespace: ns } })) !== undefined,
    );
    await createInstancePod(api, ns, 'quiet', 0, 'primary');
    await createInstancePod(api, ns, 'quiet', 1, 'replica');
    const claim = await api.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'pgdata-quiet-0', labels: { 'keelson.io/cluster': 'quiet', 'app.kubernetes.io/component': 'database' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    await api.core.patchNamespacedPersistentVolumeClaimStatus({ namespace: ns, name: claim.metadata!.name!, body: { status: { phase: 'Bound' } } }, mergePatch);
    // Converged: a pass that writes nothing, after the watches delivered what the writes made.
    await eventually(
      'a pass without writes',
      async () => {
        await new Promise((r) => setTimeout(r, 300));
        const before = await writes();
        await controller.reconcileKey(`${ns}/quiet`);
        return (await writes()) === before;
      },
      30_000,
    );

    counting = true;
    for (let pass = 0; pass < 3; pass += 1) await controller.reconcileKey(`${ns}/quiet`);
    counting = false;
    // Watches are long-lived streams, and discovery (`/apis`) is cached for the whole operator.
    const perPass = requests.filter((r) => !r.includes('watch=true') && r !== 'GET /apis');
    assert.deepEqual(perPass, [], 'requests made by three idle passes');
    assert.deepEqual(haRequests, Array(3).fill('GET /cluster'), 'ha-node calls of three idle passes');
  });

  it('reads the Backup objects of a cluster with backups from the watch cache too', async () => {
    await api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'DatabaseCluster',
        metadata: { name: 'kept' },
        spec: { instances: 1, backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }] } },
      },
    });
    await api.createBackup(ns, {
      apiVersion: `${group}/${version}`,
      kind: 'Backup',
      metadata: { name: 'kept-manual', namespace: ns },
      spec: { cluster: 'kept', type: 'full' },
    });
    await eventually(
      'the StatefulSet',
      async () => (await api.read({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'kept', namespace: ns } })) !== undefined,
    );
    await createInstancePod(api, ns, 'kept', 0, 'primary');
    // The pass marks the Backup Pending (no member can take it: the pod has no address) and then writes nothing.
    await eventually(
      'the Backup Pending and a pass without writes',
      async () => {
        await new Promise((r) => setTimeout(r, 300));
        const before = await writes();
        await controller.reconcileKey(`${ns}/kept`);
        const backups = await api.listBackupsLive(ns);
        return (await writes()) === before && backups.items.some((b) => (b.status as { phase?: string } | undefined)?.phase === 'Pending');
      },
      30_000,
    );

    requests.length = 0;
    counting = true;
    for (let pass = 0; pass < 3; pass += 1) await controller.reconcileKey(`${ns}/kept`);
    counting = false;
    const perPass = requests.filter((r) => !r.includes('watch=true') && r !== 'GET /apis');
    assert.deepEqual(perPass, [], 'requests made by three idle passes of a cluster with backups');
  });
});
