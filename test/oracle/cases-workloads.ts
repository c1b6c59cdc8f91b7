/** Pods (binding, status, graceful deletion) and the StatefulSet/Deployment rules the operator meets. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { NS, type CaseModule } from './context.js';
import { kubeJson } from '../support/kube.js';

const podPath = (name = ''): string => `/api/v1/namespaces/${NS}/pods${name ? `/${name}` : ''}`;
const pod = (name: string, nodeName?: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'pods' } },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'main', image: 'postgres:15' }] },
});

export const workloadCases: CaseModule = (ctx) => {
  it('pods: defaults, Pending phase, binding to a node, status through /status', async () => {
    const { server } = ctx();
    const created = await kubeJson(server, 'POST', podPath(), { body: pod('p-bind') });
    assert.equal(created.status, 201, created.text);
    const spec = created.body.spec as {
      restartPolicy: string;
      terminationGracePeriodSeconds: number;
      dnsPolicy: string;
      containers: Array<{ imagePullPolicy: string; terminationMessagePath: string }>;
    };
    assert.deepEqual([spec.restartPolicy, spec.terminationGracePeriodSeconds, spec.dnsPolicy], ['Always', 30, 'ClusterFirst']);
    assert.equal(spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(spec.containers[0].terminationMessagePath, '/dev/termination-log');
    assert.equal((created.body.status as { phase: string }).phase, 'Pending');
    const bind = await kubeJson(server, 'POST', `${podPath('p-bind')}/binding`, {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p-bind' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } },
    });
    assert.equal(bind.status, 201, bind.text);
    const bound = await kubeJson(server, 'GET', podPath('p-bind'));
    assert.equal((bound.body.spec as { nodeName: string }).nodeName, 'node-1');
    const again = await kubeJson(server, 'POST', `${podPath('p-bind')}/binding`, {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p-bind' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-2' } },
    });
    assert.equal(again.status, 409);
    const status = await kubeJson(server, 'PATCH', `${podPath('p-bind')}/status`, {
      body: { status: { phase: 'Running', podIP: '127.0.0.5' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(status.status, 200, status.text);
    assert.equal((status.body.status as { phase: string }).phase, 'Running');
    const specChange = await kubeJson(server, 'PATCH', podPath('p-bind'), {
      body: { spec: { containers: [{ name: 'main', image: 'postgres:16' }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(specChange.status, 200, 'the image is one of the few mutable pod fields');
    const forbidden = await kubeJson(server, 'PATCH', podPath('p-bind'), {
      body: { spec: { restartPolicy: 'Never' } },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(forbidden.status, 422);
  });

  it('pods: an unbound pod is deleted at once; a bound pod waits out its grace period', async () => {
    const { server } = ctx();
    await kubeJson(server, 'POST', podPath(), { body: pod('p-unbound') });
    assert.equal((await kubeJson(server, 'DELETE', podPath('p-unbound'))).status, 200);
    assert.equal((await kubeJson(server, 'GET', podPath('p-unbound'))).status, 404);
    await kubeJson(server, 'POST', podPath(), { body: pod('p-bound', 'node-1') });
    const graceful = await kubeJson(server, 'DELETE', podPath('p-bound'), { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 20 } });
    assert.equal(graceful.status, 200);
    const held = await kubeJson(server, 'GET', podPath('p-bound'));
    assert.equal(held.status, 200);
    assert.equal((held.body.metadata as { deletionGracePeriodSeconds: number }).deletionGracePeriodSeconds, 20);
    assert.ok((held.body.metadata as { deletionTimestamp?: string }).deletionTimestamp);
    const now = await kubeJson(server, 'DELETE', podPath('p-bound'), { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    assert.equal(now.status, 200);
    assert.equal((await kubeJson(server, 'GET', podPath('p-bound'))).status, 404);
  });

  it('StatefulSet: generation counts spec changes; only some spec fields may change (422 otherwise)', async () => {
    const { server } = ctx();
    const path = `/apis/apps/v1/namespaces/${NS}/statefulsets`;
    const sts = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        serviceName: 'db',
        replicas: 2,
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'postgres:15' }] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    };
    const created = await kubeJson(server, 'POST', path, { body: sts });
    assert.equal(created.status, 201, created.text);
    const createdSpec = created.body.spec as {
      podManagementPolicy: string;
      updateStrategy: { type: string; rollingUpdate?: { partition: number } };
      revisionHistoryLimit: number;
    };
    assert.deepEqual(
      [createdSpec.podManagementPolicy, createdSpec.updateStrategy.type, createdSpec.revisionHistoryLimit],
      ['OrderedReady', 'RollingUpdate', 10],
    );
    assert.equal((created.body.metadata as { generation: number }).generation, 1);
    const scaled = await kubeJson(server, 'PATCH', `${path}/db`, { body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json' });
    assert.equal((scaled.body.metadata as { generation: number }).generation, 2);
    const labelled = await kubeJson(server, 'PATCH', `${path}/db`, { body: { metadata: { labels: { x: 'y' } } }, contentType: 'application/merge-patch+json' });
    assert.equal((labelled.body.metadata as { generation: number }).generation, 2);
    const status = await kubeJson(server, 'PATCH', `${path}/db/status`, {
      body: { status: { replicas: 3, readyReplicas: 1, observedGeneration: 2 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(status.status, 200, status.text);
    assert.equal((status.body.metadata as { generation: number }).generation, 2);
    const forbidden = await kubeJson(server, 'PATCH', `${path}/db`, { body: { spec: { serviceName: 'other' } }, contentType: 'application/merge-patch+json' });
    assert.equal(forbidden.status, 422);
    assert.match(String(forbidden.body.message), /updates to statefulset spec for fields other than/);
  });

  it('StatefulSet /scale: replicas maps onto spec.replicas; a negative Scale is 422 Invalid', async () => {
    const { server } = ctx();
    const path = `/apis/apps/v1/namespaces/${NS}/statefulsets/db/scale`;
    const scaled = await kubeJson(server, 'PATCH', path, { body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json' });
    assert.equal(scaled.status, 200, scaled.text);
    assert.deepEqual(scaled.body.spec, { replicas: 3 });
    const negative = await kubeJson(server, 'PATCH', path, { body: { spec: { replicas: -1 } }, contentType: 'application/merge-patch+json' });
    assert.equal(negative.status, 422, negative.text);
    assert.match(String(negative.body.message), /^Scale.autoscaling "db" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0/);
  });

  it('PersistentVolumeClaims need accessModes and a storage request (422); the spec is immutable except size', async () => {
    const { server } = ctx();
    const path = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
    const missing = await kubeJson(server, 'POST', path, { body: { metadata: { name: 'pvc-bad' }, spec: {} } });
    assert.equal(missing.status, 422, missing.text);
    const fields = (missing.body.details as { causes: Array<{ field: string }> }).causes.map((c) => c.field).sort();
    assert.deepEqual(fields, ['spec.accessModes', 'spec.resources[storage]']);
    const ok = await kubeJson(server, 'POST', path, {
      body: { metadata: { name: 'pvc' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal((ok.body.status as { phase: string }).phase, 'Pending');
    const change = await kubeJson(server, 'PATCH', `${path}/pvc`, {
      body: { spec: { accessModes: ['ReadWriteMany'] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(change.status, 422, change.text);
    assert.match(String(change.body.message), /spec: Forbidden: spec is immutable after creation except resources.requests/);
    // Only a Bound claim may grow (cases-storage.ts covers its StorageClass); this one is Pending.
    const grow = await kubeJson(server, 'PATCH', `${path}/pvc`, {
      body: { spec: { resources: { requests: { storage: '2Gi' } } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(grow.status, 422, grow.text);
    assert.match(String(grow.body.message), /spec: Forbidden: spec is immutable after creation except resources\.requests/);
    const shrink = await kubeJson(server, 'PATCH', `${path}/pvc`, {
      body: { spec: { resources: { requests: { storage: '512Mi' } } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(shrink.status, 422, shrink.text);
    assert.match(String(shrink.body.message), /field can not be less than previous value/);
  });
};
