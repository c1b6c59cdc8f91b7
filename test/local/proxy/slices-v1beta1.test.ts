// The service proxy on kube-apiserver 1.20.2, which serves EndpointSlices only as
// discovery.k8s.io/v1beta1: the proxy finds that through discovery and routes a Service by its
// v1beta1 slices (no Endpoints object exists; no controller writes one here). The Service range is
// a loopback /24, so the proxy listens on the cluster IP the real server allocated.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { ServiceNameLabel } from '../../../local/controllers/endpoint-slices.js';
import { AddressPool } from '../../../local/node/addresses.js';
import { startServiceProxy, type ServiceProxy } from '../../../local/proxy/proxy.js';
import { chooseSliceVersion, servedSliceVersion } from '../../../local/proxy/slice-source.js';
import { oracleMissing, startOracleApiServer, type OracleApiServer } from '../../support/oracle.js';
import { eventually, randomIpPrefix } from '../node/helpers.js';

const ns = 'default';
const missing = oracleMissing();
const logger = createLogger({ name: 'slices-v1beta1', level: process.env.LOG_LEVEL ?? 'silent' });

it('prefers discovery.k8s.io/v1 slices and falls back to v1beta1', () => {
  assert.equal(chooseSliceVersion(new Set(['discovery.k8s.io/v1', 'discovery.k8s.io/v1beta1'])), 'discovery.k8s.io/v1');
  assert.equal(chooseSliceVersion(new Set(['discovery.k8s.io/v1beta1', 'apps/v1'])), 'discovery.k8s.io/v1beta1');
  assert.equal(chooseSliceVersion(new Set(['apps/v1'])), undefined);
});

async function answerOf(ip: string): Promise<string | undefined> {
  try {
    const response = await fetch(`http://${ip}:80/`, { signal: AbortSignal.timeout(2000) });
    return await response.text();
  } catch {
    return undefined;
  }
}

if (missing && process.env.CI === 'true') {
  it('has the oracle binaries (required when CI=true)', () => assert.fail(`${missing}. CI must run scripts/oracle/ci-step.sh first.`));
} else if (missing) {
  process.stdout.write(`# v1beta1 EndpointSlice proxy test not run: ${missing}\n`);
} else {
  describe('service proxy on kube-apiserver 1.20.2: routes by discovery.k8s.io/v1beta1 EndpointSlices', { timeout: 120_000 }, () => {
    const servicePrefix = randomIpPrefix();
    const backendIp = `${randomIpPrefix()}.7`;
    let oracle: OracleApiServer;
    let proxy: ServiceProxy;
    let backend: Server;
    let objects: k8s.KubernetesObjectApi;

    before(async () => {
      backend = createServer((_req, res) => res.end('backend'));
      await new Promise<void>((resolve) => backend.listen(8080, backendIp, resolve));
      oracle = await startOracleApiServer({ serviceCidr: `${servicePrefix}.0/24` });
      objects = k8s.KubernetesObjectApi.makeApiClient(oracle.kubeConfig);
      proxy = await startServiceProxy({ kubeConfig: oracle.kubeConfig, addresses: new AddressPool(randomIpPrefix()), logger });
    });

    after(async () => {
      await proxy?.close();
      await oracle?.close();
      await new Promise((resolve) => backend?.close(resolve));
    });

    it('discovers that only v1beta1 is served', async () => {
      assert.equal(await servedSliceVersion(oracle.kubeConfig), 'discovery.k8s.io/v1beta1');
    });

    it('routes a Service through its v1beta1 slice, and stops when the endpoint is not ready', async () => {
      const core = oracle.kubeConfig.makeApiClient(k8s.CoreV1Api);
      const service = await core.createNamespacedService({
        namespace: ns,
        body: { metadata: { name: 'manual' }, spec: { ports: [{ name: 'http', port: 80 }] } },
      });
      const clusterIp = service.spec!.clusterIP!;
      assert.ok(clusterIp.startsWith(`${servicePrefix}.`), `the server allocated ${clusterIp} from the loopback range`);
      const slice = (ready: boolean) => ({
        apiVersion: 'discovery.k8s.io/v1beta1',
        kind: 'EndpointSlice',
        metadata: { namespace: ns, name: 'manual-1', labels: { [ServiceNameLabel]: 'manual' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: [backendIp], conditions: { ready }, topology: { 'kubernetes.io/hostname': 'local' } }],
      });
      await objects.create(slice(true));
      await assert.rejects(core.readNamespacedEndpoints({ namespace: ns, name: 'manual' }), 'no Endpoints object exists');
      assert.equal(await eventually(() => answerOf(clusterIp), 'the backend through the v1beta1 slice'), 'backend');
      assert.deepEqual(proxy.snapshot()[`${clusterIp}:80`], [`${backendIp}:8080`]);
      await objects.patch(slice(false), undefined, undefined, 'test', undefined, k8s.PatchStrategy.MergePatch);
      await eventually(async () => ((await answerOf(clusterIp)) === undefined ? true : undefined), 'no backend once the endpoint is not ready');
      assert.equal(proxy.snapshot()[`${clusterIp}:80`], undefined, 'with no ready backend the port is not listened on');
    });
  });
}
