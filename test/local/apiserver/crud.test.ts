import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeRequest, microTime, startTestApiServer, type TestApiServer } from '../../support/kube.js';

function codeOf(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

function bodyOf(err: unknown): Record<string, unknown> {
  const body = (err as { body?: unknown }).body;
  return typeof body === 'string' ? (JSON.parse(body) as Record<string, unknown>) : ((body ?? {}) as Record<string, unknown>);
}

describe('API server stand-in: CRUD, CAS and patches with client-node', () => {
  let server: TestApiServer;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  let coordination: k8s.CoordinationV1Api;

  before(async () => {
    server = await startTestApiServer();
    core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
    apps = server.kubeConfig.makeApiClient(k8s.AppsV1Api);
    coordination = server.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  });
  after(() => server.close());

  it('serves version, health and discovery', async () => {
    const version = await kubeRequest(server, 'GET', '/version');
    assert.equal((version.body as { minor: string }).minor, '32');
    assert.equal((await kubeRequest(server, 'GET', '/readyz')).text, 'ok');
    const groups = (await kubeRequest(server, 'GET', '/apis')).body as { groups: Array<{ name: string }> };
    const names = groups.groups.map((g) => g.name);
    for (const g of ['apps', 'coordination.k8s.io', 'rbac.authorization.k8s.io', 'policy', 'apiextensions.k8s.io']) assert.ok(names.includes(g), g);
    const coreList = (await kubeRequest(server, 'GET', '/api/v1')).body as { resources: Array<{ name: string }> };
    assert.ok(coreList.resources.some((r) => r.name === 'pods/status'));
    const aggregated = await kubeRequest(server, 'GET', '/apis', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    assert.match(String(aggregated.headers['content-type']), /v=v2;as=APIGroupDiscoveryList/);
    const beta = await kubeRequest(server, 'GET', '/api', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
    });
    assert.equal((beta.body as { apiVersion: string }).apiVersion, 'apidiscovery.k8s.io/v2beta1');
    const legacy = await kubeRequest(server, 'GET', '/api', { accept: 'application/json' });
    assert.equal((legacy.body as { kind: string }).kind, 'APIVersions');
    const openapi = (await kubeRequest(server, 'GET', '/openapi/v3')).body as { paths: Record<string, { serverRelativeURL: string }> };
    const leaseDoc = await kubeRequest(server, 'GET', openapi.paths['apis/coordination.k8s.io/v1'].serverRelativeURL);
    assert.match(leaseDoc.text, /fieldValidation/);
  });

  it('has the bootstrap namespaces', async () => {
    const list = await core.listNamespace();
    const names = list.items.map((n) => n.metadata?.name);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.ok(names.includes(n), n);
    assert.equal(list.items[0].status?.phase, 'Active');
  });

  it('creates, reads, replaces and deletes a ConfigMap with resourceVersion CAS', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cas' }, data: { a: '1' } } });
    assert.ok(created.metadata?.uid);
    assert.ok(created.metadata?.creationTimestamp);
    await assert.rejects(
      core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cas' } } }),
      (e) => codeOf(e) === 409 && bodyOf(e).reason === 'AlreadyExists',
    );
    const replaced = await core.replaceNamespacedConfigMap({ name: 'cas', namespace: 'default', body: { ...created, data: { a: '2' } } });
    assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion);
    await assert.rejects(core.replaceNamespacedConfigMap({ name: 'cas', namespace: 'default', body: { ...created, data: { a: '3' } } }), (e) => {
      assert.equal(codeOf(e), 409);
      assert.equal(bodyOf(e).reason, 'Conflict');
      assert.match(String(bodyOf(e).message), /the object has been modified/);
      return true;
    });
    const read = await core.readNamespacedConfigMap({ name: 'cas', namespace: 'default' });
    assert.deepEqual(read.data, { a: '2' });
    // A no-op write does not bump resourceVersion.
    const same = await core.replaceNamespacedConfigMap({ name: 'cas', namespace: 'default', body: read });
    assert.equal(same.metadata?.resourceVersion, read.metadata?.resourceVersion);
    await core.deleteNamespacedConfigMap({ name: 'cas', namespace: 'default' });
    await assert.rejects(
      core.readNamespacedConfigMap({ name: 'cas', namespace: 'default' }),
      (e) => codeOf(e) === 404 && bodyOf(e).message === 'configmaps "cas" not found',
    );
  });

  it('rejects bad input with Kubernetes status codes', async () => {
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'nope', body: { metadata: { name: 'x' } } }), (e) => codeOf(e) === 404);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Bad_Name' } } }), (e) => {
      assert.equal(codeOf(e), 422);
      const details = bodyOf(e).details as { causes: Array<{ field: string }> };
      assert.equal(details.causes[0].field, 'metadata.name');
      return true;
    });
    const malformed = await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps', { body: '{not json' });
    assert.equal(malformed.status, 400);
    assert.equal((malformed.body as { kind: string }).kind, 'Status');
    const unknownPath = await kubeRequest(server, 'GET', '/apis/nothing.example/v1/things');
    assert.equal(unknownPath.status, 404);
    const generated = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    assert.match(String(generated.metadata?.name), /^gen-[a-z0-9]{5}$/);
  });

  it('decodes built-in kinds like Go structs: unknown fields dropped (400 under Strict), wrong types 400', async () => {
    const body = { metadata: { name: 'typo' }, data: { a: '1' }, dta: { b: '2' } };
    const strict = await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { body });
    assert.equal(strict.status, 400);
    assert.match(String((strict.body as { message: string }).message), /strict decoding error: unknown field "dta"/);
    const lenient = await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps', { body });
    assert.equal(lenient.status, 201);
    assert.equal((lenient.body as Record<string, unknown>).dta, undefined);
    assert.equal(lenient.headers.warning, '299 - "unknown field \\"dta\\""', 'fieldValidation defaults to Warn');
    const ignored = await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', {
      body: { ...body, metadata: { name: 'typo-2' } },
    });
    assert.equal(ignored.headers.warning, undefined);
    const wrongType = await kubeRequest(server, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: { ...deployment('typed'), spec: { ...deployment('typed').spec, replicas: 'two' } },
    });
    assert.equal(wrongType.status, 400);
    assert.match(String((wrongType.body as { message: string }).message), /cannot unmarshal string into Go struct field spec\.replicas of type int32/);
    const nested = await kubeRequest(server, 'POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict', {
      body: {
        ...deployment('nested'),
        spec: {
          ...deployment('nested').spec,
          template: { metadata: { labels: { app: 'nested' } }, spec: { containers: [{ name: 'c', image: 'x', imagePullPolicyy: 'Always' }] } },
        },
      },
    });
    assert.equal(nested.status, 400);
    assert.match(String((nested.body as { message: string }).message), /unknown field "spec\.template\.spec\.containers\[0\]\.imagePullPolicyy"/);
  });

  it('does not store empty metadata maps (Go omitempty)', async () => {
    const cm = await kubeRequest(server, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'empty-meta', labels: {}, annotations: {}, finalizers: [] } },
    });
    const meta = (cm.body as { metadata: Record<string, unknown> }).metadata;
    assert.equal(meta.labels, undefined);
    assert.equal(meta.annotations, undefined);
    assert.equal(meta.finalizers, undefined);
  });

  it('folds Secret stringData into base64 data', async () => {
    const secret = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' }, stringData: { password: 'pw' } } });
    assert.equal(secret.data?.password, Buffer.from('pw').toString('base64'));
    assert.equal(secret.type, 'Opaque');
    assert.equal((secret as { stringData?: unknown }).stringData, undefined);
  });

  it('enforces Lease MicroTime exactly (6 fraction digits) and CAS on leases', async () => {
    const lease = await coordination.createNamespacedLease({
      namespace: 'default',
      body: {
        metadata: { name: 'leader' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 10, acquireTime: microTime(), renewTime: microTime(), leaseTransitions: 0 },
      },
    });
    assert.match(String(lease.spec?.renewTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    for (const bad of ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.123Z']) {
      const res = await kubeRequest(server, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
        body: { metadata: { name: `bad-${bad.length}` }, spec: { renewTime: bad } },
      });
      assert.equal(res.status, 400, bad);
    }
    await assert.rejects(
      coordination.createNamespacedLease({
        namespace: 'default',
        body: { metadata: { name: 'date' }, spec: { renewTime: new Date() as unknown as k8s.V1MicroTime } },
      }),
      (e) => codeOf(e) === 400,
    );
    // Every MicroTime field follows the same rule (Event.eventTime), and metav1.Time must be RFC 3339.
    let n = 0;
    const event = (eventTime: string, lastTimestamp?: string) => ({
      metadata: { name: `ev-${(n += 1)}` },
      involvedObject: { kind: 'Pod', name: 'x' },
      reason: 'R',
      eventTime,
      lastTimestamp,
      reportingComponent: 'c',
      reportingInstance: 'i',
      action: 'a',
    });
    assert.equal((await kubeRequest(server, 'POST', '/api/v1/namespaces/default/events', { body: event('2026-01-01T00:00:00.123Z') })).status, 400);
    assert.equal((await kubeRequest(server, 'POST', '/api/v1/namespaces/default/events', { body: event('2026-01-01T00:00:00.123456Z') })).status, 201);
    assert.equal(
      (await kubeRequest(server, 'POST', '/api/v1/namespaces/default/events', { body: event('2026-01-01T00:00:00.123456Z', 'yesterday') })).status,
      400,
    );
    const zero = await kubeRequest(server, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      body: { metadata: { name: 'zero' }, spec: { leaseDurationSeconds: 0 } },
    });
    assert.equal(zero.status, 422);
    // Leases may be created by PUT.
    const put = await kubeRequest(server, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/by-put', {
      body: { metadata: { name: 'by-put' }, spec: { holderIdentity: 'x' } },
    });
    assert.equal(put.status, 201);
  });

  it('applies JSON patch, merge patch and strategic merge patch', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'p', labels: { a: '1' } }, data: { x: '1', y: '2' } } });
    const json = await core.patchNamespacedConfigMap({
      name: 'p',
      namespace: 'default',
      body: [
        { op: 'add', path: '/data/z', value: '3' },
        { op: 'remove', path: '/data/x' },
      ],
    });
    assert.deepEqual(json.data, { y: '2', z: '3' });
    const failedTest = await kubeRequest(server, 'PATCH', '/api/v1/namespaces/default/configmaps/p', {
      contentType: 'application/json-patch+json',
      body: [{ op: 'test', path: '/data/y', value: 'nope' }],
    });
    assert.equal(failedTest.status, 422);
    const merge = await kubeRequest(server, 'PATCH', '/api/v1/namespaces/default/configmaps/p', {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { a: null, b: '2' } }, data: { y: null } },
    });
    assert.equal(merge.status, 200);
    assert.deepEqual((merge.body as k8s.V1ConfigMap).metadata?.labels, { b: '2' });
    assert.deepEqual((merge.body as k8s.V1ConfigMap).data, { z: '3' });
    const stale = await kubeRequest(server, 'PATCH', '/api/v1/namespaces/default/configmaps/p', {
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: '1' }, data: { q: '1' } },
    });
    assert.equal(stale.status, 409);

    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('smp') });
    const smp = await kubeRequest(server, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/smp', {
      contentType: 'application/strategic-merge-patch+json',
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'sidecar', image: 'busybox' },
                { name: 'main', env: [{ name: 'B', value: '2' }] },
              ],
            },
          },
        },
      },
    });
    assert.equal(smp.status, 200);
    const containers = (smp.body as k8s.V1Deployment).spec?.template.spec?.containers ?? [];
    assert.deepEqual(
      containers.map((c) => c.name),
      ['main', 'sidecar'],
    );
    assert.deepEqual(
      containers[0].env?.map((e) => e.name),
      ['A', 'B'],
    );
    assert.equal(containers[0].image, 'nginx:1.25');
    const del = await kubeRequest(server, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/smp', {
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } },
    });
    assert.deepEqual(
      (del.body as k8s.V1Deployment).spec?.template.spec?.containers.map((c) => c.name),
      ['main'],
    );
  });

  it('keeps generation, observedGeneration and the status subresource apart', async () => {
    const created = await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('gen') });
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.spec?.replicas, 1);
    const labelled = await apps.patchNamespacedDeployment({
      name: 'gen',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }],
    });
    assert.equal(labelled.metadata?.generation, 1, 'label edits do not bump generation');
    const scaled = await apps.patchNamespacedDeployment({ name: 'gen', namespace: 'default', body: [{ op: 'replace', path: '/spec/replicas', value: 3 }] });
    assert.equal(scaled.metadata?.generation, 2);
    // status through the main endpoint is ignored; through /status only status changes.
    const ignored = await apps.replaceNamespacedDeployment({ name: 'gen', namespace: 'default', body: { ...scaled, status: { replicas: 9 } } });
    assert.equal(ignored.status?.replicas, undefined);
    const status = await apps.replaceNamespacedDeploymentStatus({
      name: 'gen',
      namespace: 'default',
      body: { ...ignored, spec: { ...ignored.spec!, replicas: 7 }, status: { observedGeneration: 2, replicas: 3 } },
    });
    assert.equal(status.status?.observedGeneration, 2);
    assert.equal(status.spec?.replicas, 3);
    assert.equal(status.metadata?.generation, 2);
    const scale = await apps.readNamespacedDeploymentScale({ name: 'gen', namespace: 'default' });
    assert.equal(scale.spec?.replicas, 3);
    assert.equal(scale.status?.selector, 'app=gen');
    const rescaled = await apps.replaceNamespacedDeploymentScale({
      name: 'gen',
      namespace: 'default',
      body: { metadata: { name: 'gen', namespace: 'default' }, spec: { replicas: 5 } },
    });
    assert.equal(rescaled.spec?.replicas, 5);
    assert.equal((await apps.readNamespacedDeployment({ name: 'gen', namespace: 'default' })).metadata?.generation, 3);
    await assert.rejects(
      apps.createNamespacedDeployment({
        namespace: 'default',
        body: { ...deployment('bad'), spec: { ...deployment('bad').spec!, selector: { matchLabels: { other: 'x' } } } },
      }),
      (e) => codeOf(e) === 422,
    );
  });

  it('lists with label and field selectors and pages with limit/continue', async () => {
    for (let i = 0; i < 5; i += 1) {
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `page-${i}`, labels: { tier: i % 2 === 0 ? 'even' : 'odd', page: 'yes' } } },
      });
    }
    const even = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'tier=even' });
    assert.deepEqual(
      even.items.map((c) => c.metadata?.name),
      ['page-0', 'page-2', 'page-4'],
    );
    const notIn = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'page,tier notin (even)' });
    assert.deepEqual(
      notIn.items.map((c) => c.metadata?.name),
      ['page-1', 'page-3'],
    );
    const byName = await core.listNamespacedConfigMap({ namespace: 'default', fieldSelector: 'metadata.name=page-3' });
    assert.equal(byName.items.length, 1);
    await assert.rejects(core.listNamespacedConfigMap({ namespace: 'default', fieldSelector: 'data.x=1' }), (e) => codeOf(e) === 400);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'page=yes', limit: 2 });
    assert.equal(first.items.length, 2);
    assert.equal(first.metadata?.remainingItemCount, 3);
    const second = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'page=yes', limit: 2, _continue: first.metadata?._continue });
    const third = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'page=yes', limit: 2, _continue: second.metadata?._continue });
    assert.deepEqual(
      [...first.items, ...second.items, ...third.items].map((c) => c.metadata?.name),
      ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'],
    );
    assert.equal(third.metadata?._continue, undefined);
    const all = await core.listConfigMapForAllNamespaces({ labelSelector: 'page=yes' });
    assert.equal(all.items.length, 5);
  });

  it('stores the other kinds Keelson uses', async () => {
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'sa' } } });
    const svc = await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'db-rw' }, spec: { selector: { role: 'primary' }, ports: [{ port: 5432 }] } },
    });
    assert.match(String(svc.spec?.clusterIP), /^127\./);
    assert.equal(svc.spec?.ports?.[0].targetPort, 5432);
    await core.createNamespacedEndpoints({ namespace: 'default', body: { metadata: { name: 'db-rw' }, subsets: [] } });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    const pod = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal(pod.status?.phase, 'Pending');
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'e1' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'default', uid: pod.metadata?.uid },
        reason: 'Started',
        message: 'hi',
        type: 'Normal',
      },
    });
    const events = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.uid=${pod.metadata?.uid},involvedObject.kind=Pod` });
    assert.equal(events.items.length, 1);
    const rbac = server.kubeConfig.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'rb' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
        subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'default' }],
      },
    });
    await rbac.createClusterRole({ body: { metadata: { name: 'system:keelson' }, rules: [] } });
    const policy = server.kubeConfig.makeApiClient(k8s.PolicyV1Api);
    const pdb = await policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: { metadata: { name: 'pdb' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'x' } } } },
    });
    assert.equal(pdb.metadata?.generation, 1);
    const sts = await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: {
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'postgres:15' }] } },
        },
      },
    });
    assert.equal(sts.spec?.podManagementPolicy, 'OrderedReady');
    const binding = await kubeRequest(server, 'POST', '/api/v1/namespaces/default/pods/p/binding', {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'local' } },
    });
    assert.equal(binding.status, 201);
    assert.equal((await core.readNamespacedPod({ name: 'p', namespace: 'default' })).spec?.nodeName, 'local');
    const pods = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=local' });
    assert.equal(pods.items.length, 1);
  });

  it('serves server-side apply to client-node KubernetesObjectApi (upsert, force, fieldManager required)', async () => {
    const objects = k8s.KubernetesObjectApi.makeApiClient(server.kubeConfig);
    const desired = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'default', labels: { owner: 'operator' } }, data: { a: '1' } };
    const created = await objects.patch(desired, undefined, undefined, 'keelson-operator', true, k8s.PatchStrategy.ServerSideApply);
    assert.deepEqual((created as k8s.V1ConfigMap).data, { a: '1' });
    const updated = await objects.patch({ ...desired, data: { b: '2' } }, undefined, undefined, 'keelson-operator', true, k8s.PatchStrategy.ServerSideApply);
    assert.deepEqual((updated as k8s.V1ConfigMap).data, { b: '2' }, 'a field the manager no longer applies is removed');
    const managers = (updated as k8s.V1ConfigMap).metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`);
    assert.deepEqual(managers, ['keelson-operator/Apply']);
    const anonymous = await kubeRequest(server, 'PATCH', '/api/v1/namespaces/default/configmaps/ssa', {
      contentType: 'application/apply-patch+yaml',
      body: 'data:\n  c: "3"\n',
    });
    assert.equal(anonymous.status, 422);
    assert.match(String((anonymous.body as { message: string }).message), /fieldManager: Required value: is required for apply patch/);
    const malformed = await kubeRequest(server, 'GET', '/api/v1/namespaces/%E0%A4%A/configmaps');
    assert.equal(malformed.status, 400);
  });

  it('keeps immutable ConfigMaps and allocated cluster IPs', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'frozen' }, immutable: true, data: { a: '1' } } });
    await assert.rejects(
      core.replaceNamespacedConfigMap({ name: 'frozen', namespace: 'default', body: { ...cm, data: { a: '2' } } }),
      (e) => codeOf(e) === 422,
    );
    const svc = await core.readNamespacedService({ name: 'db-rw', namespace: 'default' });
    const replaced = await core.replaceNamespacedService({
      name: 'db-rw',
      namespace: 'default',
      body: { ...svc, spec: { ...svc.spec, clusterIP: undefined, clusterIPs: undefined } },
    });
    assert.equal(replaced.spec?.clusterIP, svc.spec?.clusterIP, 'an omitted clusterIP is carried over');
    const badTimeout = await kubeRequest(server, 'GET', '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=soon');
    assert.equal(badTimeout.status, 400);
  });

  it('deletes pods on a node gracefully (deletionTimestamp first, gone after grace 0)', async () => {
    const pod = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
    const pending = await core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
    assert.ok((pending as k8s.V1Pod).metadata?.deletionTimestamp);
    assert.equal((pending as k8s.V1Pod).metadata?.deletionGracePeriodSeconds, 30);
    await core.deleteNamespacedPod({ name: 'p', namespace: 'default', gracePeriodSeconds: 0, body: { preconditions: { uid: pod.metadata?.uid } } });
    await assert.rejects(core.readNamespacedPod({ name: 'p', namespace: 'default' }), (e) => codeOf(e) === 404);
  });
});

function deployment(name: string): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25', env: [{ name: 'A', value: '1' }] }] } },
    },
  };
}
