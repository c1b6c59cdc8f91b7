// Two local stacks at once (as two `keelson local up --ip-prefix ...` would run): each API server
// allocates Service cluster IPs from its own node's /24, so the two service proxies never listen
// on the same address and each Service reaches its own stack's pod.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { loadKubeConfig } from '../../../lib/kube/client.js';
import { parseServiceCidr, serviceCidrOfPrefix, ServiceIpAllocator } from '../../../local/apiserver/writes/service-ips.js';
import { startLocalStack, type LocalStack } from '../../../local/cluster/stack.js';
import { eventually, getJson, httpPodContainer, httpPodScript, randomIpPrefix } from '../node/helpers.js';

function podAndService(core: k8s.CoreV1Api): Promise<unknown> {
  const pod = core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [httpPodContainer([], { command: [process.execPath, httpPodScript] })],
      },
    },
  });
  const service = core.createNamespacedService({
    namespace: 'default',
    body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] } },
  });
  return Promise.all([pod, service]);
}

describe('service cluster IPs', () => {
  it('come from the configured range, top down, skipping used ones; a bad range is a clear error', () => {
    const allocator = new ServiceIpAllocator('127.9.8.0/24');
    const service = (clusterIP?: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: {}, spec: { clusterIP } });
    const first = service();
    allocator.allocate(first, new Set());
    assert.equal(first.spec.clusterIP, '127.9.8.254');
    const second = service();
    allocator.allocate(second, new Set(['127.9.8.253']));
    assert.equal(second.spec.clusterIP, '127.9.8.252');
    const headless = service('None');
    allocator.allocate(headless, new Set());
    assert.equal(headless.spec.clusterIP, 'None');
    assert.deepEqual(parseServiceCidr('127.1.0.0/16'), { low: 0x7f010001, high: 0x7f01fffe });
    assert.equal(serviceCidrOfPrefix('127.0.41'), '127.0.41.0/24');
    // A private range (a node namespace's Service /24); public ones and ranges straddling a block are refused.
    assert.deepEqual(parseServiceCidr('10.213.1.0/24'), { low: 0x0ad50101, high: 0x0ad501fe });
    assert.throws(() => new ServiceIpAllocator('8.8.8.0/24'), /inside 127.0.0.0\/8 or a private range/);
    assert.throws(() => new ServiceIpAllocator('172.0.0.0/8'), /inside 127.0.0.0\/8 or a private range/);
    assert.throws(() => new ServiceIpAllocator('127.0.0.0/31'), /N from 8 to 30/);
  });
});

describe('two local stacks side by side', { timeout: 120_000 }, () => {
  const prefixes = [randomIpPrefix()];
  while (prefixes.length < 2) prefixes.push(...[randomIpPrefix()].filter((p) => p !== prefixes[0]));
  const stacks: LocalStack[] = [];
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keelson-two-stacks-'));
    const logger = createLogger({ name: 'two-stacks-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    for (const [i, ipPrefix] of prefixes.entries()) {
      stacks.push(await startLocalStack({ dir: join(dir, `stack-${i}`), logger, ipPrefix, operatorVersion: '0.1.0' }));
    }
  });
  after(async () => {
    for (const stack of stacks) await stack.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('give each stack Service addresses from its own /24, and each Service reaches its own pod', async () => {
    const cores = stacks.map((s) => loadKubeConfig({ kubeconfig: s.kubeconfigPath }).makeApiClient(k8s.CoreV1Api));
    await Promise.all(cores.map(podAndService));
    for (const [i, core] of cores.entries()) {
      const service = await core.readNamespacedService({ name: 'web', namespace: 'default' });
      const clusterIP = service.spec?.clusterIP ?? '';
      assert.ok(clusterIP.startsWith(`${prefixes[i]}.`), `${clusterIP} is inside ${prefixes[i]}.0/24`);
      const kubernetes = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
      assert.ok(kubernetes.spec?.clusterIP?.startsWith(`${prefixes[i]}.`), 'the bootstrap Service too');
      const answer = await eventually(async () => (await getJson(`http://${clusterIP}/`)).body, `stack ${i} Service web answering`, 60_000, 200);
      assert.equal(answer.ip, (await core.readNamespacedPod({ name: 'web', namespace: 'default' })).status?.podIP);
      assert.ok(String(answer.ip).startsWith(`${prefixes[i]}.`));
    }
  });
});
