import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeRequest, openWatch, startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { pgCluster, pgClusterCrd } from '../fixtures.js';

const group = 'demo.example.com';
const base = '/apis/demo.example.com/v1/namespaces/default/pgclusters';

type Obj = { metadata: { name: string; generation?: number; resourceVersion?: string }; spec?: Record<string, unknown>; status?: Record<string, unknown> };

function codeOf(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

describe('API server stand-in: CustomResourceDefinitions', () => {
  let server: TestApiServer;
  let custom: k8s.CustomObjectsApi;

  before(async () => {
    server = await startTestApiServer();
    custom = server.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    // Raw JSON on purpose: client-node's typed model renames `default` and `x-kubernetes-*` keys.
    const created = await kubeRequest(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: pgClusterCrd });
    assert.equal(created.status, 201);
  });
  after(() => server.close());

  it('establishes the CRD and serves its group in discovery and OpenAPI', async () => {
    const ext = server.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
    let crd = await ext.readCustomResourceDefinition({ name: 'pgclusters.demo.example.com' });
    for (let i = 0; i < 50 && !crd.status?.conditions?.some((c) => c.type === 'Established'); i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      crd = await ext.readCustomResourceDefinition({ name: 'pgclusters.demo.example.com' });
    }
    assert.equal(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, 'True');
    assert.deepEqual(crd.status?.storedVersions, ['v1']);
    const resources = (await kubeRequest(server, 'GET', '/apis/demo.example.com/v1')).body as { resources: Array<{ name: string; shortNames?: string[] }> };
    assert.deepEqual(resources.resources.map((r) => r.name).sort(), ['pgclusters', 'pgclusters/scale', 'pgclusters/status']);
    assert.deepEqual(resources.resources.find((r) => r.name === 'pgclusters')?.shortNames, ['pgc']);
    const openapi = (await kubeRequest(server, 'GET', '/openapi/v3')).body as { paths: Record<string, unknown> };
    assert.ok(openapi.paths['apis/demo.example.com/v1']);
  });

  it('rejects CRDs that are not structural or whose rules do not compile', async () => {
    const bad = structuredClone(pgClusterCrd) as typeof pgClusterCrd;
    bad.metadata.name = 'others.demo.example.com';
    bad.spec.names = { plural: 'others', singular: 'other', kind: 'Other', shortNames: [], categories: [] };
    (bad.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties as Record<string, unknown>).untyped = { properties: { a: { type: 'string' } } };
    const res = await kubeRequest(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: bad });
    assert.equal(res.status, 422);
    assert.match(String((res.body as { message: string }).message), /properties\[untyped\]\.type: Required value/);
    const badRule = structuredClone(pgClusterCrd) as typeof pgClusterCrd;
    badRule.metadata.name = 'others.demo.example.com';
    badRule.spec.names = bad.spec.names;
    badRule.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.instances >', message: 'x' }];
    const ruleRes = await kubeRequest(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: badRule });
    assert.equal(ruleRes.status, 422);
    assert.match(String((ruleRes.body as { message: string }).message), /compilation failed/);
    const webhook = { ...structuredClone(pgClusterCrd), metadata: { name: 'others.demo.example.com' } };
    webhook.spec = { ...webhook.spec, names: bad.spec.names, conversion: { strategy: 'Webhook' } } as typeof webhook.spec;
    const webhookRes = await kubeRequest(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: webhook });
    assert.equal(webhookRes.status, 422);
    assert.match(String((webhookRes.body as { message: string }).message), /conversion webhooks are not supported/);
  });

  it('defaults, prunes and validates custom resources', async () => {
    const created = (await custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: 'default',
      plural: 'pgclusters',
      body: pgCluster('demo', { instances: 3, unknownField: 1, extra: { free: { form: true } } }),
    })) as Obj;
    assert.equal(created.spec?.version, '15');
    assert.equal(created.spec?.maxInstances, 9);
    assert.equal(created.spec?.unknownField, undefined, 'unknown fields are pruned');
    assert.deepEqual(created.spec?.extra, { free: { form: true } }, 'preserve-unknown-fields keeps its subtree');
    assert.equal(created.metadata.generation, 1);

    const strict = await kubeRequest(server, 'POST', `${base}?fieldValidation=Strict`, { body: pgCluster('strict', { instances: 1, bogus: true }) });
    assert.equal(strict.status, 400);
    assert.match(String((strict.body as { message: string }).message), /unknown field "spec.bogus"/);

    const wrongType = await kubeRequest(server, 'POST', base, { body: pgCluster('typed', { instances: 'three' }) });
    assert.equal(wrongType.status, 422);
    assert.match(String((wrongType.body as { message: string }).message), /spec\.instances in body must be of type integer: "string"/);
    const causes = (wrongType.body as { details: { causes: Array<{ field: string }> } }).details.causes.map((c) => c.field);
    assert.deepEqual(causes, ['spec.instances']);

    const missing = await kubeRequest(server, 'POST', base, { body: pgCluster('missing', { version: '16' }) });
    assert.equal(missing.status, 422);
    assert.match(String((missing.body as { message: string }).message), /spec\.instances: Required value/);

    const badEnum = await kubeRequest(server, 'POST', base, { body: pgCluster('enum', { instances: 1, version: '9' }) });
    assert.equal(badEnum.status, 422);
    assert.match(String((badEnum.body as { message: string }).message), /Unsupported value: "9"/);
  });

  it('evaluates CEL rules, including transition rules on update', async () => {
    const tooMany = await kubeRequest(server, 'POST', base, { body: pgCluster('cel', { instances: 5, maxInstances: 3 }) });
    assert.equal(tooMany.status, 422);
    assert.match(String((tooMany.body as { message: string }).message), /instances must not exceed maxInstances/);
    const current = (await custom.getNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'pgclusters', name: 'demo' })) as Obj;
    const immutable = await kubeRequest(server, 'PUT', `${base}/demo`, { body: { ...current, spec: { ...current.spec, storageClass: 'fast' } } });
    assert.equal(immutable.status, 422);
    assert.match(String((immutable.body as { message: string }).message), /storageClass is immutable/);
  });

  it('separates the status subresource and tracks generation on spec changes only', async () => {
    const current = (await custom.getNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'pgclusters', name: 'demo' })) as Obj;
    const noRv = await kubeRequest(server, 'PUT', `${base}/demo`, { body: { ...current, metadata: { name: 'demo' } } });
    assert.equal(noRv.status, 422, 'custom resources need resourceVersion on update');
    const ignored = (await custom.replaceNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: 'default',
      plural: 'pgclusters',
      name: 'demo',
      body: { ...current, status: { phase: 'Hacked' } },
    })) as Obj;
    assert.equal(ignored.status, undefined);
    assert.equal(ignored.metadata.generation, 1);
    const status = (await custom.patchNamespacedCustomObjectStatus(
      {
        group,
        version: 'v1',
        namespace: 'default',
        plural: 'pgclusters',
        name: 'demo',
        body: { status: { phase: 'Running', instances: 3, selector: 'app=demo', observedGeneration: 1 }, spec: { instances: 1 } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as Obj;
    assert.equal(status.status?.phase, 'Running');
    assert.equal(status.spec?.instances, 3, 'status writes leave spec alone');
    assert.equal(status.metadata.generation, 1);
    const scaled = (await custom.patchNamespacedCustomObject(
      { group, version: 'v1', namespace: 'default', plural: 'pgclusters', name: 'demo', body: { spec: { instances: 4 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as Obj;
    assert.equal(scaled.metadata.generation, 2);
    assert.equal(scaled.status?.phase, 'Running');
    const smp = await kubeRequest(server, 'PATCH', `${base}/demo`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { instances: 2 } } });
    assert.equal(smp.status, 415, 'strategic merge patch is not supported for custom resources');
  });

  it('serves the scale subresource from the CRD paths', async () => {
    const scale = (await kubeRequest(server, 'GET', `${base}/demo/scale`)).body as {
      kind: string;
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.spec.replicas, 4);
    assert.equal(scale.status.replicas, 3);
    assert.equal(scale.status.selector, 'app=demo');
    const patched = await kubeRequest(server, 'PATCH', `${base}/demo/scale`, { contentType: 'application/merge-patch+json', body: { spec: { replicas: 6 } } });
    assert.equal(patched.status, 200);
    const after = (await custom.getNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'pgclusters', name: 'demo' })) as Obj;
    assert.equal(after.spec?.instances, 6);
  });

  it('prints additionalPrinterColumns in Tables', async () => {
    await custom.patchNamespacedCustomObjectStatus(
      { group, version: 'v1', namespace: 'default', plural: 'pgclusters', name: 'demo', body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const table = (await kubeRequest(server, 'GET', base, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' })).body as {
      kind: string;
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[]; object: { metadata: { name: string } } }>;
    };
    assert.equal(table.kind, 'Table');
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Instances', 'Phase', 'Ready', 'Age'],
    );
    assert.deepEqual(table.rows[0].cells.slice(0, 4), ['demo', 6, 'Running', 'True']);
    assert.equal(table.rows[0].object.metadata.name, 'demo');
  });

  it('removes custom resources and their paths when the CRD is deleted', async () => {
    const ext = server.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
    const watch = await openWatch(server, `${base}?watch=true`);
    await watch.waitFor(1);
    // Writes to the CRD's status do not disturb watches of its resources.
    const crd = await ext.readCustomResourceDefinition({ name: 'pgclusters.demo.example.com' });
    await kubeRequest(server, 'PATCH', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/pgclusters.demo.example.com/status', {
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          conditions: [
            ...(crd.status?.conditions ?? []),
            { type: 'Terminating', status: 'False', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), reason: 'Test', message: 'x' },
          ],
        },
      },
    });
    await ext.deleteCustomResourceDefinition({ name: 'pgclusters.demo.example.com' });
    await watch.ended;
    assert.deepEqual(
      watch.events.map((e) => e.type),
      ['ADDED', 'DELETED'],
      'the watch saw the object go, then ended',
    );
    for (let i = 0; i < 50; i += 1) {
      const res = await kubeRequest(server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/pgclusters.demo.example.com');
      if (res.status === 404) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await assert.rejects(custom.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'pgclusters' }), (e) => codeOf(e) === 404);
    assert.equal((await kubeRequest(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: pgClusterCrd })).status, 201);
    const list = (await custom.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'pgclusters' })) as { items: unknown[] };
    assert.equal(list.items.length, 0, 'recreating the CRD does not bring old objects back');
  });
});
