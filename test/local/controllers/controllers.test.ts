// Deployment and StatefulSet controllers against the API server stand-in with pods really
// running: rollout of a new template, scale down, and StatefulSet rolling update order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { openWatch } from '../../support/kube.js';
import { eventually, httpPodContainer, isReady, randomIpPrefix, startNodeTestbed, statefulSetOf, type NodeTestbed } from '../node/helpers.js';

const ns = 'ctl';
let dir: string;
let bed: NodeTestbed;
let server: NodeTestbed['server'];
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;

function template(app: string, version: string): k8s.V1PodTemplateSpec {
  return {
    metadata: { labels: { app } },
    spec: {
      terminationGracePeriodSeconds: 2,
      containers: [httpPodContainer([{ name: 'VERSION', value: version }])],
    },
  };
}

async function pods(app: string): Promise<k8s.V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keelson-controllers-'));
  bed = await startNodeTestbed({ dir, ns, ipPrefix: randomIpPrefix(), name: 'controllers-test' });
  ({ server, core, apps } = bed);
});

after(async () => {
  await bed?.close();
  await rm(dir, { recursive: true, force: true });
});

test('a Deployment runs its replicas, rolls out a new template and scales down', async () => {
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: { metadata: { name: 'api' }, spec: { replicas: 2, selector: { matchLabels: { app: 'api' } }, template: template('api', 'v1') } },
  });
  const first = await eventually(
    async () => {
      const list = await pods('api');
      return list.length === 2 && list.every(isReady) ? list : undefined;
    },
    'two ready api pods',
    30_000,
  );
  const deployment = await apps.readNamespacedDeployment({ name: 'api', namespace: ns });
  for (const pod of first) {
    assert.equal(pod.metadata?.ownerReferences?.[0].uid, deployment.metadata?.uid);
    assert.ok(pod.metadata?.labels?.['pod-template-hash']);
  }
  await eventually(
    async () => (await apps.readNamespacedDeployment({ name: 'api', namespace: ns })).status?.availableReplicas === 2,
    'deployment status available 2',
  );

  await apps.patchNamespacedDeployment(
    { name: 'api', namespace: ns, body: { spec: { template: template('api', 'v2') } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  const oldNames = new Set(first.map((p) => p.metadata?.name));
  const rolled = await eventually(
    async () => {
      const list = (await pods('api')).filter((p) => !p.metadata?.deletionTimestamp);
      const fresh = list.every((p) => !oldNames.has(p.metadata?.name) && p.spec?.containers[0].env?.some((e) => e.name === 'VERSION' && e.value === 'v2'));
      return list.length === 2 && fresh && list.every(isReady) ? list : undefined;
    },
    'rollout to v2',
    40_000,
  );
  assert.equal(new Set(rolled.map((p) => p.metadata?.labels?.['pod-template-hash'])).size, 1);
  await eventually(async () => {
    const status = (await apps.readNamespacedDeployment({ name: 'api', namespace: ns })).status;
    return status?.updatedReplicas === 2 && status.readyReplicas === 2 && status.observedGeneration === 2;
  }, 'deployment status after rollout');

  await apps.patchNamespacedDeploymentScale(
    { name: 'api', namespace: ns, body: { spec: { replicas: 1 } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  await eventually(async () => (await pods('api')).length === 1, 'scaled down to one pod', 20_000);
});

test('a StatefulSet rolling update replaces pods from the highest ordinal; scale down keeps claims', async () => {
  await apps.createNamespacedStatefulSet({ namespace: ns, body: statefulSetOf('db', { replicas: 2, serviceName: 'db', template: template('db', 'v1') }) });
  await eventually(async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace: ns })).status?.readyReplicas === 2, 'db ready', 30_000);
  const watch = await openWatch(server, `/api/v1/namespaces/${ns}/pods?watch=true&labelSelector=app%3Ddb`);
  try {
    await apps.patchNamespacedStatefulSet(
      { name: 'db', namespace: ns, body: { spec: { template: template('db', 'v2') } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const set = await eventually(
      async () => {
        const current = await apps.readNamespacedStatefulSet({ name: 'db', namespace: ns });
        const s = current.status;
        const observed = s?.observedGeneration === current.metadata?.generation;
        return observed && s?.updatedReplicas === 2 && s.readyReplicas === 2 && s.currentRevision === s.updateRevision ? current : undefined;
      },
      'rolling update finished',
      40_000,
    );
    // Exactly one deletion per old pod, the highest ordinal first. (A late status write of a
    // deleted pod used to land on its successor of the same name, which then looked finished and
    // was deleted too; the uid in the status patch is now a precondition, as on a real server.)
    const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => (e.object as { metadata: { name: string } }).metadata.name);
    assert.deepEqual(deleted, ['db-1', 'db-0']);
    for (const pod of await pods('db')) assert.equal(pod.metadata?.labels?.['controller-revision-hash'], set.status?.updateRevision);
  } finally {
    watch.stop();
  }
  await apps.patchNamespacedStatefulSetScale(
    { name: 'db', namespace: ns, body: { spec: { replicas: 1 } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  await eventually(async () => (await pods('db')).map((p) => p.metadata?.name).join() === 'db-0', 'db scaled to db-0', 20_000);
  const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items.map((c) => c.metadata?.name).sort();
  assert.deepEqual(claims, ['data-db-0', 'data-db-1']);
});
