/**
 * The operator end to end on a real control plane: kube-apiserver 1.20.2 and kube-controller-manager
 * with all its controllers (StatefulSet, Endpoints, EndpointSlice, garbage collector, PVC
 * protection, node lifecycle, ...), none of the stand-in's. The local node runs only the node
 * agent (pods in their own network namespaces, ADR 0354) and the service proxy, so pod addresses
 * are private ones the real Endpoints controller accepts, and demo-rw is reached by its cluster
 * IP as a client would. The whole run is inside an isolated node namespace; the API server
 * listens on the bridge and advertises that address (1.20 would take it from a default route).
 * Without the oracle binaries the file reports why and runs nothing, except with CI=true.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/log.js';
import { installCrds } from '../../local/cluster/stack.js';
import { ensureNodeNetwork } from '../../local/node/netns/node-network.js';
import { nodeSubnet, serviceCidrOfSubnet } from '../../local/node/netns/subnet.js';
import { startLocalNode, type LocalNode } from '../../local/node/run.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { names } from '../../operator/naming.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import { enterIsolatedRun } from '../support/netns.js';
import { oracleMissing, startOracleApiServer, type OracleApiServer } from '../support/oracle.js';
import { clusterDriver, deleteCluster, failOver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { eventually } from './support.js';

const ns = 'default';
const logger = createLogger({ name: 'e2e-real-control-plane', level: process.env.LOG_LEVEL ?? 'silent' });
const missing = oracleMissing();
const subnet = nodeSubnet('10.213.40');
/** kube-controller-manager's default flex-volume folder: the run must not create it on the host. */
const hostFlexFolder = '/usr/libexec/kubernetes';
const flexFolderBefore = existsSync(hostFlexFolder);

if (missing && process.env.CI === 'true') {
  describe('operator end to end on a real control plane', () => {
    it('has the oracle binaries (required when CI=true)', () => assert.fail(`${missing}. CI must run scripts/oracle/ci-step.sh first.`));
  });
} else if (missing) {
  process.stdout.write(`# operator e2e on a real control plane not run: ${missing}\n`);
} else if (await enterIsolatedRun(import.meta.url, 300_000)) {
  describe('operator end to end on kube-apiserver + kube-controller-manager 1.20.2, pods in network namespaces', { timeout: 280_000 }, () => {
    let dir: string;
    let oracle: OracleApiServer;
    let node: LocalNode;
    let operator: RunningOperator;
    let api: OperatorKubeApi;
    let demo: ClusterDriver;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'keelson-e2e-real-'));
      chmodSync(dir, 0o755); // the database processes run as the postgres account and must reach their folders
      await ensureNodeNetwork(subnet);
      oracle = await startOracleApiServer({ address: subnet.apiAddress, controllers: 'all', serviceCidr: serviceCidrOfSubnet(subnet), readyTimeoutMs: 90_000 });
      api = new OperatorKubeApi(oracle.kubeConfig);
      demo = clusterDriver(api, ns, 'demo', viaClusterIp);
      await installCrds(oracle.kubeConfig, logger);
      node = await startLocalNode({
        kubeconfigPath: oracle.kubeconfigPath,
        dir: join(dir, 'node'),
        network: 'namespace',
        podNetwork: subnet.prefix,
        controllers: 'none',
        logger: logger.child({ component: 'node' }),
      });
      operator = await runOperator({
        kubeconfig: oracle.kubeconfigPath,
        namespaces: [],
        leaderElect: true,
        leaseNamespace: ns,
        leaseName: 'keelson-operator',
        identity: 'e2e-real-control-plane',
        health: { host: '127.0.0.1', port: 0 },
        metrics: { host: '127.0.0.1', port: 0 },
        relistIntervalMs: 10_000,
        operatorVersion: '0.1.0',
        logger: logger.child({ component: 'operator' }),
      });
    });

    after(async () => {
      await operator?.stop();
      await node?.close();
      await oracle?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('apply → Ready with three members; the real Endpoints controller publishes the private pod addresses and demo-rw takes writes', async () => {
      await demo.create({ instances: 3, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 } });
      const status = await demo.healthyWith(3, 180_000);
      assert.equal(status.members?.length, 3);
      const pods = await demo.pods();
      assert.ok(pods.every((p) => p.status?.podIP?.startsWith(`${subnet.prefix}.`)), `pods on the private network: ${pods.map((p) => p.status?.podIP).join(', ')}`);

      const endpoints = await api.core.readNamespacedEndpoints({ namespace: ns, name: names('demo').rwService });
      const primary = pods.find((p) => p.metadata?.name === status.currentPrimary);
      assert.deepEqual(endpoints.subsets?.flatMap((s) => (s.addresses ?? []).map((a) => a.ip)), [primary?.status?.podIP], 'demo-rw lists the primary only');
      // Only kube-controller-manager's Endpoints controller stamps this; the stand-in's does not.
      assert.ok(endpoints.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'], 'written by the real Endpoints controller');
      const revisions = await oracle.kubeConfig.makeApiClient(AppsV1Api).listNamespacedControllerRevision({ namespace: ns });
      assert.ok(revisions.items.some((r) => r.metadata?.ownerReferences?.some((o) => o.kind === 'StatefulSet' && o.name === 'demo')), 'the real StatefulSet controller keeps ControllerRevisions');

      await demo.readPassword();
      await eventually('writes through demo-rw', async () => {
        await demo.query('demo-rw', 'CREATE TABLE IF NOT EXISTS e2e (id int PRIMARY KEY, note text)');
        await demo.query('demo-rw', "INSERT INTO e2e VALUES (1, 'before failover') ON CONFLICT (id) DO NOTHING");
        return true;
      }, 30_000);
    });

    it('deleting the primary pod elects a new primary; the real StatefulSet controller recreates the pod and demo-rw follows', async () => {
      const { old, next } = await failOver(api, ns, demo, 'e2e', 2);
      assert.notEqual(next, old);
      assert.deepEqual((await demo.query('demo-rw', 'SELECT id FROM e2e ORDER BY id')).map((r) => r.id), [1, 2], 'committed rows survived');
      const healed = await demo.healthyWith(3, 120_000);
      assert.equal(healed.members?.find((m) => m.name === old)?.role, 'replica', `${old} came back as a replica`);
    });

    it('deletion leaves no Leases behind, and the real garbage collector removes the StatefulSet and its pods', async () => {
      await deleteCluster(api, ns, 'demo', demo);
      const apps = oracle.kubeConfig.makeApiClient(AppsV1Api);
      await eventually('StatefulSet collected', async () => apps.readNamespacedStatefulSet({ namespace: ns, name: 'demo' }).then(() => false, (err: unknown) => apiStatusCode(err) === 404), 60_000);
      await eventually('pods gone', async () => (await demo.pods()).length === 0, 90_000);

      // Claims outlive the cluster; deleting them completes only because the PVC protection controller
      // lifts its finalizer once no pod uses them (without it they would hang in Terminating).
      const claims = (await api.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items.filter((c) => /-demo-\d+$/.test(c.metadata?.name ?? ''));
      assert.ok(claims.length >= 3, `the StatefulSet's claims remain: ${claims.map((c) => c.metadata?.name).join(', ')}`);
      assert.ok(claims.every((c) => c.metadata?.finalizers?.includes('kubernetes.io/pvc-protection')), 'the real server guards claims with the protection finalizer');
      await Promise.all(claims.map((c) => api.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: c.metadata!.name! })));
      await eventually('claims deleted', async () => (await api.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items.every((c) => !claims.some((d) => d.metadata?.name === c.metadata?.name)), 60_000);
    });

    it('the controller manager created no volume plugin folder on the host', () => {
      if (!flexFolderBefore) assert.equal(existsSync(hostFlexFolder), false, `${hostFlexFolder} was created (--flex-volume-plugin-dir must point into the run's folder)`);
    });
  });
}
