import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { mergePatch } from '../../local/controllers/kube.js';
import { Informer } from '../../lib/kube/informer.js';
import { createLogger } from '../../lib/log.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { ReadCache } from '../../operator/read-cache.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { eventually } from './support.js';

const ns = 'default';
const selector = 'app=kube-api-cache';
const logger = createLogger({ name: 'kube-api-cache-test', level: process.env.LOG_LEVEL ?? 'silent' });

/**
 * OperatorKubeApi's writes as its watch cache keeps them. A pod deleted with a grace period stays
 * until its kubelet is done: the operator must keep seeing it meanwhile (a member that is still
 * shutting down writes its DCS Leases, so a cluster's deletion waits for its pods to be gone).
 */
describe('OperatorKubeApi over its watch cache', () => {
  let server: TestApiServer;
  let api: OperatorKubeApi;
  let informer: Informer<V1Pod>;

  before(async () => {
    server = await startTestApiServer();
    api = new OperatorKubeApi(server.kubeConfig);
    informer = new Informer<V1Pod>({
      kubeConfig: server.kubeConfig,
      path: `/api/v1/namespaces/${ns}/pods`,
      labelSelector: selector,
      list: async (resourceVersion) => {
        const list = await api.core.listNamespacedPod({ namespace: ns, labelSelector: selector, ...(resourceVersion ? { resourceVersion } : {}) });
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
      },
      logger,
      onEvent: () => undefined,
    });
    await informer.start();
    const cache = new ReadCache();
    cache.add('v1', 'Pod', ns, informer);
    api.useCache(cache);
  });

  after(async () => {
    informer?.stop();
    await server?.close();
  });

  it('a pod it deletes that is still terminating stays in its view until it is gone', async () => {
    await api.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'member-0', labels: { app: 'kube-api-cache' }, finalizers: ['keelson.io/test-terminating'] },
        spec: { containers: [{ name: 'c', image: 'test' }] },
      },
    });
    await eventually('the pod in the cache', async () => ((await api.listPods(ns, selector)).length === 1 ? true : undefined));
    // The watch brings the deletion's update before this client's own DELETE returns (either order happens).
    await api.core.deleteNamespacedPod({ namespace: ns, name: 'member-0' });
    await eventually('the cache sees it terminating', async () => ((await api.listPods(ns, selector))[0]?.metadata?.deletionTimestamp ? true : undefined));
    await api.delete({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'member-0', namespace: ns } });
    assert.deepEqual(
      (await api.listPods(ns, selector)).map((p) => p.metadata?.name),
      ['member-0'],
      'still listed while it terminates',
    );
    await api.core.patchNamespacedPod({ namespace: ns, name: 'member-0', body: { metadata: { finalizers: null } } }, mergePatch);
    await eventually('gone from the cache once deleted', async () => ((await api.listPods(ns, selector)).length === 0 ? true : undefined));
  });
});
