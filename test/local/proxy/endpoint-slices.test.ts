// EndpointSlices on the local node: the endpoints controller writes them beside Endpoints (ready
// and not-ready endpoints), and the proxy routes by them, also for a Service whose only
// endpoints are a slice someone else wrote.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ServiceNameLabel } from '../../../local/controllers/endpoint-slices.js';
import { eventually, httpPodContainer, randomIpPrefix, startNodeTestbed, type NodeTestbed } from '../node/helpers.js';

const ns = 'slices';

async function podAnswer(ip: string): Promise<string | undefined> {
  try {
    const response = await fetch(`http://${ip}:80/`, { signal: AbortSignal.timeout(2000) });
    return ((await response.json()) as { pod?: string }).pod;
  } catch {
    return undefined;
  }
}

describe('EndpointSlices: written by the endpoints controller, read by the proxy', { timeout: 120_000 }, () => {
  let dir: string;
  let bed: NodeTestbed;
  let discovery: k8s.DiscoveryV1Api;
  let podIp: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-slices-'));
    bed = await startNodeTestbed({ dir, ns, ipPrefix: randomIpPrefix(), name: 'slices' });
    discovery = bed.server.kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
    await bed.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [httpPodContainer()] } },
    });
    const pod = await eventually(async () => {
      const p = await bed.core.readNamespacedPod({ namespace: ns, name: 'web' });
      return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
    }, 'pod ready');
    podIp = pod.status!.podIP!;
  });

  after(async () => {
    await bed?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const slicesOf = async (service: string) =>
    (await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: `${ServiceNameLabel}=${service}` })).items;

  it('writes a slice per Service with the pod ready, and marks it not ready when its probe fails', async () => {
    await bed.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
    });
    const [slice] = await eventually(async () => {
      const slices = await slicesOf('web');
      return slices.length === 1 && slices[0]!.endpoints?.length === 1 ? slices : undefined;
    }, 'a slice for web');
    assert.equal(slice!.addressType, 'IPv4');
    assert.deepEqual(
      slice!.ports?.map((p) => [p.name, p.port]),
      [['http', 8080]],
    );
    assert.deepEqual(slice!.endpoints[0]!.addresses, [podIp]);
    assert.equal(slice!.endpoints[0]!.conditions?.ready, true);
    assert.equal(slice!.metadata?.ownerReferences?.[0]?.kind, 'Service');

    await fetch(`http://${podIp}:8080/unready`, { method: 'POST' });
    await eventually(async () => ((await slicesOf('web'))[0]?.endpoints[0]?.conditions?.ready === false ? true : undefined), 'the endpoint not ready');
    await fetch(`http://${podIp}:8080/ready`, { method: 'POST' });
    await eventually(async () => ((await slicesOf('web'))[0]?.endpoints[0]?.conditions?.ready === true ? true : undefined), 'the endpoint ready again');
  });

  it('routes a Service without a selector through a slice that has no Endpoints beside it', async () => {
    const service = await bed.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'manual' }, spec: { ports: [{ name: 'http', port: 80 }] } },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: ns,
      body: {
        metadata: { name: 'manual-1', labels: { [ServiceNameLabel]: 'manual' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: [podIp], conditions: { ready: true } }],
      },
    });
    const clusterIp = await eventually(
      async () => (await bed.core.readNamespacedService({ namespace: ns, name: 'manual' })).spec?.clusterIP || undefined,
      'a cluster IP',
    );
    assert.equal(service.metadata?.name, 'manual');
    await assert.rejects(bed.core.readNamespacedEndpoints({ namespace: ns, name: 'manual' }), 'no Endpoints object exists');
    assert.equal(await eventually(() => podAnswer(clusterIp), 'the pod through the slice'), 'web');
    // The slice goes: the Service has no backend left.
    await discovery.deleteNamespacedEndpointSlice({ namespace: ns, name: 'manual-1' });
    await eventually(async () => ((await podAnswer(clusterIp)) === undefined ? true : undefined), 'no backend once the slice is gone');
  });

  it('never proxies to an address outside loopback from the host network (it would leave the machine)', async () => {
    await bed.core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'foreign' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await discovery.createNamespacedEndpointSlice({
      namespace: ns,
      body: {
        metadata: { name: 'foreign-1', labels: { [ServiceNameLabel]: 'foreign' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        // 10.0.0.9 is only written into the object: the proxy must refuse it before any connection.
        endpoints: [
          { addresses: ['10.0.0.9'], conditions: { ready: true } },
          { addresses: [podIp], conditions: { ready: true } },
        ],
      },
    });
    const clusterIp = await eventually(
      async () => (await bed.core.readNamespacedService({ namespace: ns, name: 'foreign' })).spec?.clusterIP || undefined,
      'a cluster IP',
    );
    const backends = await eventually(async () => bed.node.proxy.snapshot()[`${clusterIp}:80`], 'the proxy listening for foreign');
    assert.deepEqual(backends, [`${podIp}:8080`]);
  });
});
