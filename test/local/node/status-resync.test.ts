// Kubelet fidelity of the node agent: another writer's change to a pod's status (the node
// lifecycle controller marking it Ready=False) is written back, and the node keeps a heartbeat
// Lease in kube-node-lease.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { NodeLeaseNamespace } from '../../../local/node/node-heartbeat.js';
import { eventually, httpPodContainer, randomIpPrefix, startNodeTestbed, type NodeTestbed } from './helpers.js';

const ns = 'resync';
const readyOf = (pod: k8s.V1Pod) => pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;

describe('node agent: pod status re-asserted, node Lease renewed', { timeout: 120_000 }, () => {
  let dir: string;
  let bed: NodeTestbed;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-resync-'));
    bed = await startNodeTestbed({ dir, ns, ipPrefix: randomIpPrefix(), name: 'status-resync' });
  });

  after(async () => {
    await bed?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes Ready=True back after another writer set Ready=False', async () => {
    await bed.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'web' }, spec: { containers: [httpPodContainer()] } } });
    await eventually(async () => readyOf(await bed.core.readNamespacedPod({ namespace: ns, name: 'web' })) === 'True' || undefined, 'pod ready');
    // As the node lifecycle controller does: read, flip the Ready condition, PUT the status.
    const pod = await bed.core.readNamespacedPod({ namespace: ns, name: 'web' });
    for (const c of pod.status!.conditions!) if (c.type === 'Ready') Object.assign(c, { status: 'False', reason: 'NodeNotReady' });
    const flipped = await bed.core.replaceNamespacedPodStatus({ namespace: ns, name: 'web', body: pod });
    assert.equal(readyOf(flipped), 'False');
    await eventually(
      async () => readyOf(await bed.core.readNamespacedPod({ namespace: ns, name: 'web' })) === 'True' || undefined,
      'Ready=True written back',
      15_000,
    );
  });

  it('keeps a Lease in kube-node-lease named after the node and renews it', async () => {
    const coordination = bed.server.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const first = await coordination.readNamespacedLease({ namespace: NodeLeaseNamespace, name: 'keelson-local' });
    assert.equal(first.spec?.holderIdentity, 'keelson-local');
    assert.equal(first.spec?.leaseDurationSeconds, 40);
    assert.equal(first.metadata?.ownerReferences?.[0]?.kind, 'Node');
    const renewed = await eventually(
      async () => {
        const lease = await coordination.readNamespacedLease({ namespace: NodeLeaseNamespace, name: 'keelson-local' });
        return new Date(lease.spec!.renewTime!).getTime() > new Date(first.spec!.renewTime!).getTime() ? lease : undefined;
      },
      'the Lease renewed by the 10 s heartbeat',
      25_000,
      500,
    );
    assert.equal(renewed.spec?.holderIdentity, 'keelson-local');
    const node = await bed.core.readNode({ name: 'keelson-local' });
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  });
});
