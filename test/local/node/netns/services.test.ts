/**
 * Services in namespace mode (ADR 0355): cluster IPs come from the node namespace's private
 * Service /24, which is local there, so the service proxy listens on them and pods in their own
 * network namespaces reach them through the node. A pod fetches another pod through a Service's
 * cluster IP; the Service follows its ready backend; the pod still has no route out of the node.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../../lib/log.js';
import { ipJson } from '../../../../local/node/netns/commands.js';
import { ensureNodeNetwork } from '../../../../local/node/netns/node-network.js';
import { nodeSubnet, serviceCidrOfSubnet } from '../../../../local/node/netns/subnet.js';
import { startLocalNode, type LocalNode } from '../../../../local/node/run.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { enterIsolatedRun } from '../../../support/netns.js';
import { eventually, getJson, httpPodContainer, readyPod, testImages } from '../helpers.js';

const inside = await enterIsolatedRun(import.meta.url, 120_000);
const logger = () => createLogger({ name: 'netns-services', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

if (inside) {
  describe('Services in namespace mode', { timeout: 100_000 }, () => {
    const subnet = nodeSubnet('10.213.6');
    let dir: string;
    let server: TestApiServer;
    let node: LocalNode;
    let core: k8s.CoreV1Api;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'netns-services-'));
      await ensureNodeNetwork(subnet);
      server = await startTestApiServer({ host: subnet.apiAddress, serviceCidr: serviceCidrOfSubnet(subnet) });
      node = await startLocalNode({
        kubeconfigPath: server.kubeconfigPath,
        dir: join(dir, 'node'),
        images: testImages,
        network: 'namespace',
        podNetwork: subnet.prefix,
        logger: logger(),
      });
      core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'svc' } } });
    });

    after(async () => {
      await node?.close();
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const backend = (name: string, app: string): k8s.V1Pod => ({
      metadata: { name, labels: { app } },
      spec: { containers: [httpPodContainer()], terminationGracePeriodSeconds: 1 },
    });

    it('a pod reaches another pod through a Service cluster IP, which follows the ready backend', async () => {
      await core.createNamespacedService({
        namespace: 'svc',
        body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] } },
      });
      const clusterIP = (await core.readNamespacedService({ namespace: 'svc', name: 'web' })).spec?.clusterIP ?? '';
      assert.ok(clusterIP.startsWith(`${subnet.servicePrefix}.`), `cluster IP ${clusterIP} from the Service /24 ${subnet.servicePrefix}.0/24`);

      await core.createNamespacedPod({ namespace: 'svc', body: backend('web-a', 'web') });
      const client: k8s.V1Pod = {
        metadata: { name: 'client' },
        spec: { containers: [httpPodContainer([{ name: 'RELAY_URL', value: `http://${clusterIP}:80/` }])], terminationGracePeriodSeconds: 1 },
      };
      await core.createNamespacedPod({ namespace: 'svc', body: client });
      const first = await readyPod(core, 'svc', 'web-a', 'backend web-a ready', 60_000);
      const clientPod = await readyPod(core, 'svc', 'client', 'client pod ready', 60_000);
      const clientIP = clientPod.status?.podIP ?? '';

      const viaService = async (expectedIP: string) =>
        eventually(
          async () => {
            const answer = (await getJson(`http://${clientIP}:8080/relay`, 5000)).body as { status?: number; body?: { ip?: string }; error?: string };
            return answer.status === 200 && answer.body?.ip === expectedIP ? answer : undefined;
          },
          `the client pod reaches ${expectedIP} through ${clusterIP}:80`,
          20_000,
          250,
        );
      await viaService(first.status?.podIP ?? '');

      // The only backend goes away and another takes its place: the Service follows.
      await core.deleteNamespacedPod({ namespace: 'svc', name: 'web-a' });
      await core.createNamespacedPod({ namespace: 'svc', body: backend('web-b', 'web') });
      const second = await readyPod(core, 'svc', 'web-b', 'backend web-b ready', 60_000);
      await viaService(second.status?.podIP ?? '');

      // The client's namespace routes only the pod /24 (the link) and the Service /24 through the node.
      // From this node's agent: /run/netns is shared with other nodes' namespaces.
      const clientNamespace = [...node.agent.workers.values()].find((w) => w.key === 'svc/client' && !w.isTerminated)?.networkNamespace ?? '';
      assert.ok(clientNamespace, 'the client pod has a network namespace');
      const routes = await ipJson<{ dst: string; gateway?: string }>(['-4', 'route', 'show'], basename(clientNamespace));
      assert.deepEqual(
        routes.map((r) => `${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}`).sort(),
        [`${subnet.prefix}.0/24`, `${subnet.servicePrefix}.0/24 via ${subnet.nodeAddress}`].sort(),
      );
    });
  });
}
