/**
 * The node agent in namespace mode: refused outside an isolated namespace; inside one, a pod runs
 * in its own network namespace on a private address, is probed from the node (httpGet) and inside
 * its namespace (exec), reaches the API server on the bridge, and its namespace goes with it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../../lib/log.js';
import { serviceCidrOfPrefix } from '../../../../local/apiserver/writes/service-ips.js';
import { ensureNodeNetwork } from '../../../../local/node/netns/node-network.js';
import { nodeSubnet } from '../../../../local/node/netns/subnet.js';
import { startLocalNode, type LocalNode } from '../../../../local/node/run.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { enterIsolatedRun } from '../../../support/netns.js';
import { eventually, getJson, httpPodContainer, randomIpPrefix, readyPod, testImages } from '../helpers.js';

const inside = await enterIsolatedRun(import.meta.url, 120_000);
const logger = () => createLogger({ name: 'netns-node', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

if (!inside) {
  describe('namespace mode outside an isolated namespace', { timeout: 30_000 }, () => {
    it("refuses to start in the host's namespace and creates nothing", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'netns-refuse-'));
      const server = await startTestApiServer();
      try {
        await assert.rejects(
          startLocalNode({ kubeconfigPath: server.kubeconfigPath, dir, network: 'namespace', logger: logger() }),
          /refusing namespace mode: this network namespace has a way out of the machine \(.*default route/,
        );
      } finally {
        await server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

if (inside) {
  describe('node agent in namespace mode', { timeout: 100_000 }, () => {
    const subnet = nodeSubnet('10.213.9');
    const ipPrefix = randomIpPrefix();
    let dir: string;
    let server: TestApiServer;
    let node: LocalNode;
    let core: k8s.CoreV1Api;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'netns-node-'));
      await ensureNodeNetwork(subnet);
      server = await startTestApiServer({ host: subnet.apiAddress, serviceCidr: serviceCidrOfPrefix(ipPrefix) });
      node = await startLocalNode({
        kubeconfigPath: server.kubeconfigPath,
        dir: join(dir, 'node'),
        ipPrefix,
        images: testImages,
        network: 'namespace',
        podNetwork: subnet.prefix,
        logger: logger(),
      });
      core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'netns' } } });
    });

    after(async () => {
      await node?.close();
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a node whose API server pods could not reach', async () => {
      const loopbackServer = await startTestApiServer();
      try {
        await assert.rejects(
          startLocalNode({
            kubeconfigPath: loopbackServer.kubeconfigPath,
            dir: join(dir, 'other'),
            network: 'namespace',
            podNetwork: subnet.prefix,
            logger: logger(),
          }),
          /pods cannot reach the API server at 127\.0\.0\.1:\d+; serve it on 10\.213\.9\.254/,
        );
      } finally {
        await loopbackServer.close();
      }
    });

    it('runs a pod in its own namespace, probed from the node and inside it, reaching the API server', async () => {
      const container = httpPodContainer([], {
        // Only inside the pod's namespace is there an eth0 holding the pod address.
        livenessProbe: { exec: { command: ['sh', '-c', 'ip -o addr show dev eth0 | grep -q "inet $POD_IP/"'] }, periodSeconds: 1, failureThreshold: 2 },
      });
      await core.createNamespacedPod({
        namespace: 'netns',
        body: { metadata: { name: 'web' }, spec: { containers: [container], terminationGracePeriodSeconds: 1 } },
      });
      const pod = await readyPod(core, 'netns', 'web', 'pod web ready', 30_000);
      const podIP = pod.status?.podIP ?? '';
      assert.match(podIP, /^10\.213\.9\.\d+$/);
      assert.equal(pod.status?.hostIP, subnet.nodeAddress);

      const answer = (await getJson(`http://${podIP}:8080/`)).body as { pid: number; ip: string };
      assert.equal(answer.ip, podIP);
      const podNamespace = readlinkSync(`/proc/${answer.pid}/ns/net`);
      assert.notEqual(podNamespace, readlinkSync('/proc/self/ns/net'), 'the container is not in the node namespace');
      // Only this node's namespaces: /run/netns is shared with other nodes (other runs) on the machine.
      const agentPath = [...node.agent.workers.values()].find((w) => w.key === 'netns/web' && !w.isTerminated)?.networkNamespace ?? '';
      const ours = (n: string) => agentPath.endsWith(`/${n}`);
      const files = readdirSync('/run/netns').filter((n) => n.endsWith(`-${podIP.split('.')[3]}`) && n.startsWith('keelson-') && ours(n));
      assert.equal(files.length, 1, `one pod namespace for ${podIP}: ${files.join(', ')} (the agent's: ${agentPath})`);
      assert.equal(podNamespace, `net:[${statSync(`/run/netns/${files[0]}`).ino}]`);

      const whoami = (await getJson(`http://${podIP}:8080/whoami`, 5000)).body as { status?: number; error?: string };
      assert.equal(whoami.status, 201, `the pod reaches the API server on the bridge: ${JSON.stringify(whoami)}`);

      // The exec liveness probe keeps passing (a failing one would restart the container).
      await new Promise((r) => setTimeout(r, 3000));
      const later = await core.readNamespacedPod({ name: 'web', namespace: 'netns' });
      assert.equal(later.status?.containerStatuses?.[0]?.restartCount, 0);

      await core.deleteNamespacedPod({ name: 'web', namespace: 'netns' });
      await eventually(() => !existsSync(`/run/netns/${files[0]}`), 'pod namespace removed with the pod', 20_000);
    });
  });
}
