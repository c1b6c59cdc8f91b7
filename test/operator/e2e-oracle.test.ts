/**
 * The operator end to end against a real kube-apiserver 1.20.2 (the oracle: etcd, the API server
 * and a kube-controller-manager running only garbage collection and namespace deletion). The
 * stand-in's local node does the rest of a cluster's work against that server: its StatefulSet
 * controller, its kubelet (node agent running ha-node and real PostgreSQL as processes) and its
 * Endpoints controller. Differences from the stand-in run are asserted, not skipped:
 * - 1.20 serves PodDisruptionBudget only as policy/v1beta1: the operator discovers that, writes
 *   v1beta1 and says so in the ApiFallback condition and an Event.
 * - 1.20 has no CRD CEL: the CRD is installed without its rules (the operator checks them).
 * - A real server refuses loopback addresses in Endpoints, so Services cannot be proxied here;
 *   the test reaches demo-rw/demo-ro through their selectors (the pods kube-proxy would pick).
 * The server enforces RBAC for the operator, which runs with exactly operator/rbac.ts (the chart's
 * ClusterRole): a missing rule fails here, and creating ha-node's Role proves it holds those
 * rights (RBAC forbids granting more than one has). The node and the test act as administrator.
 * Without the oracle binaries the file reports why and runs nothing, except with CI=true.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { apiStatusCode, loadKubeConfig } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/log.js';
import { Ports } from '../../lib/ports.js';
import { startLocalNode, type LocalNode } from '../../local/node/run.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import type { RunningOperator } from '../../operator/run.js';
import { oracleMissing, startOracleApiServer, type OracleApiServer } from '../support/oracle.js';
import { clusterDriver, failOver, viaSelector, type ClusterDriver } from './e2e-support.js';
import { deleteAndCollect, operatorAccess, startLeadingOperator } from './oracle-operator.js';
import { eventually, writesDuringIdlePasses } from './support.js';

const ns = 'default';
const logger = createLogger({ name: 'e2e-oracle', level: process.env.LOG_LEVEL ?? 'silent' });
const missing = oracleMissing();
const operatorUser = 'keelson-operator';

if (missing && process.env.CI === 'true') {
  describe('operator end to end on kube-apiserver 1.20.2', () => {
    it('has the oracle binaries (required when CI=true)', () => assert.fail(`${missing}. CI must run scripts/oracle/ci-step.sh first.`));
  });
} else if (missing) {
  process.stdout.write(`# operator oracle e2e not run: ${missing}\n`);
} else {
  describe('operator end to end on kube-apiserver 1.20.2 (local node, real PostgreSQL)', { timeout: 180_000 }, () => {
    let dir: string;
    let oracle: OracleApiServer;
    let node: LocalNode;
    let operator: RunningOperator;
    let api: OperatorKubeApi;
    let demo: ClusterDriver;
    let operatorKubeconfig: string;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'keelson-e2e-oracle-'));
      chmodSync(dir, 0o755); // the database processes run as the postgres account and must reach their folders
      // RBAC is enforced for the operator: it runs as a user holding only operatorRules().
      const operatorToken = randomBytes(16).toString('hex');
      oracle = await startOracleApiServer({ authorizationMode: 'RBAC', users: { [operatorUser]: operatorToken } });
      operatorKubeconfig = await operatorAccess(oracle, dir, operatorUser, operatorToken, logger);
      api = new OperatorKubeApi(oracle.kubeConfig);
      demo = clusterDriver(api, ns, 'demo', viaSelector);
      node = await startLocalNode({
        kubeconfigPath: oracle.kubeconfigPath,
        dir: join(dir, 'node'),
        ipPrefix: '127.0.46',
        logger: logger.child({ component: 'node' }),
      });
      // Frequent resyncs (every 2 s), so the idle case below sees several passes.
      operator = await startLeadingOperator(operatorKubeconfig, ns, 'e2e-oracle', 2_000, logger);
    });

    after(async () => {
      await operator?.stop();
      await node?.close();
      await oracle?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('apply → Ready with one primary and two streaming replicas; PDB as policy/v1beta1, reported', async () => {
      await demo.create({ instances: 3, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 } });
      const s = await demo.healthyWith(3, 120_000);
      assert.equal(s.members?.length, 3);
      await demo.readPassword();
      await eventually(
        'two streaming replicas',
        async () => (await demo.query('demo-rw', "SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 2,
        30_000,
      );

      const custom = oracle.kubeConfig.makeApiClient(CustomObjectsApi);
      const pdb = (await custom.getNamespacedCustomObject({
        group: 'policy',
        version: 'v1beta1',
        namespace: ns,
        plural: 'poddisruptionbudgets',
        name: 'demo',
      })) as { spec: { maxUnavailable: number } };
      assert.equal(pdb.spec.maxUnavailable, 1);
      const fallback = s.conditions?.find((c) => c.type === 'ApiFallback');
      assert.equal(fallback?.status, 'True');
      assert.match(fallback?.message ?? '', /policy\/v1beta1/);
      const events = await demo.events();
      assert.equal(events.filter((e) => e.reason === 'ApiFallback').length, 1, 'one Event, not one per reconcile');
    });

    it('the operator got there with only its RBAC rules (the server enforces them)', async () => {
      const asOperator = new OperatorKubeApi(loadKubeConfig({ kubeconfig: operatorKubeconfig }));
      // It lists and watches the Secrets it owns (reads come from watch caches), but never deletes one.
      const denied = await asOperator.core.deleteNamespacedSecret({ namespace: ns, name: 'demo-app', dryRun: 'All' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.equal(apiStatusCode(denied), 403, 'deleting Secrets is not among its rules');
      const nodes = await asOperator.core.listNode().then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.equal(apiStatusCode(nodes), 403, 'listing Nodes is not among its rules');
      const role = await oracle.kubeConfig.makeApiClient(RbacAuthorizationV1Api).readNamespacedRole({ namespace: ns, name: 'demo' });
      assert.ok((role.rules?.length ?? 0) > 0, 'it could grant ha-node its Role, so it holds those rights itself');
    });

    it('writes through demo-rw and reads them from demo-ro (selected pods: loopback Endpoints are refused)', async () => {
      await demo.query('demo-rw', 'CREATE TABLE e2e (id int PRIMARY KEY, note text)');
      await demo.query('demo-rw', "INSERT INTO e2e VALUES (1, 'before failover')");
      const [role] = await demo.query('demo-ro', 'SELECT pg_is_in_recovery() AS standby');
      assert.equal(role?.standby, true, 'demo-ro selects a replica');
      await eventually('row replicated', async () => (await demo.query('demo-ro', 'SELECT note FROM e2e WHERE id = 1'))[0]?.note === 'before failover', 15_000);

      // The difference itself: the real server will not store a pod's loopback address in Endpoints.
      const primary = (await demo.pods()).find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary')!;
      const refused = await api.core
        .createNamespacedEndpoints({
          namespace: ns,
          dryRun: 'All',
          body: { metadata: { name: 'probe' }, subsets: [{ addresses: [{ ip: primary.status!.podIP! }], ports: [{ port: Ports.postgres }] }] },
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.equal(apiStatusCode(refused), 422);
      assert.match(String((refused as { body?: unknown }).body), /loopback/);
    });

    it('an idle cluster costs zero writes per resync on the real server (its defaults do not count as differences)', async () => {
      await demo.healthyWith(3);
      const before = await demo.status();
      const idle = await writesDuringIdlePasses(operator.metricsUrl, { quietMs: 3_000, timeoutMs: 30_000 });
      const after = await demo.status();
      assert.equal(
        idle.writes,
        0,
        `idle reconciles wrote to the API: ${idle.which.join(', ')}; status before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`,
      );
    });

    it('deleting the primary pod elects a new primary within ttl + a few seconds; status and demo-rw follow', async () => {
      const { old, next, elapsedMs } = await failOver(api, ns, demo, 'e2e', 2);
      assert.notEqual(next, old);
      assert.ok(elapsedMs < 10_000 + 20_000, `new primary after ${elapsedMs} ms`);
      assert.deepEqual(
        (await demo.query('demo-rw', 'SELECT id FROM e2e ORDER BY id')).map((r) => r.id),
        [1, 2],
        'committed rows survived',
      );
      await demo.healthyWith(3);
    });

    it('deletion leaves no Leases behind, and the garbage collector removes the owned objects', async () => {
      await deleteAndCollect(api, oracle, ns, 'demo', demo, { statefulSetMs: 30_000, podsMs: 60_000 });
    });
  });
}
