/**
 * Write semantics clients lean on: delete and patch preconditions, create-on-update, dry run,
 * generateName, Secret stringData, immutable ConfigMaps, missing namespaces, bad selectors.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cmPath, NS, type CaseModule } from './context.js';
import { kubeJson } from '../support/kube.js';

const metaOf = (body: Record<string, unknown>) => body.metadata as { name: string; uid: string; resourceVersion: string };

export const writeCases: CaseModule = (ctx) => {
  it('DELETE with uid and resourceVersion preconditions answers 409 when they do not match', async () => {
    const { server } = ctx();
    const created = metaOf((await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'pre-del' } } })).body);
    const wrongRv = await kubeJson(server, 'DELETE', cmPath('pre-del'), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } },
    });
    assert.equal(wrongRv.status, 409);
    assert.equal(wrongRv.body.reason, 'Conflict');
    const wrongUid = await kubeJson(server, 'DELETE', cmPath('pre-del'), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: '00000000-0000-0000-0000-000000000000' } },
    });
    assert.equal(wrongUid.status, 409);
    const right = await kubeJson(server, 'DELETE', cmPath('pre-del'), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: created.uid, resourceVersion: created.resourceVersion } },
    });
    assert.equal(right.status, 200, right.text);
  });

  it('a patch carrying a stale metadata.resourceVersion is a 409 (CAS by patch)', async () => {
    const { server } = ctx();
    const created = metaOf((await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'pre-patch' }, data: { v: '1' } } })).body);
    const ok = await kubeJson(server, 'PATCH', cmPath('pre-patch'), {
      body: { metadata: { resourceVersion: created.resourceVersion }, data: { v: '2' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(ok.status, 200);
    const stale = await kubeJson(server, 'PATCH', cmPath('pre-patch'), {
      body: { metadata: { resourceVersion: created.resourceVersion }, data: { v: '3' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
  });

  it('PUT of a missing ConfigMap is 404; POST into a missing namespace is 404', async () => {
    const { server } = ctx();
    const put = await kubeJson(server, 'PUT', cmPath('never'), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'never', namespace: NS } } });
    assert.equal(put.status, 404);
    const noNs = await kubeJson(server, 'POST', '/api/v1/namespaces/contract-absent/configmaps', { body: { metadata: { name: 'x' } } });
    assert.equal(noNs.status, 404);
    assert.equal(noNs.body.reason, 'NotFound');
    assert.equal(noNs.body.message, 'namespaces "contract-absent" not found');
  });

  it('dryRun=All validates and answers like a create but stores nothing', async () => {
    const { server } = ctx();
    const dry = await kubeJson(server, 'POST', `${cmPath()}?dryRun=All`, { body: { metadata: { name: 'dry' }, data: { a: '1' } } });
    assert.equal(dry.status, 201);
    assert.equal(metaOf(dry.body).name, 'dry');
    assert.equal((await kubeJson(server, 'GET', cmPath('dry'))).status, 404);
    const dryInvalid = await kubeJson(server, 'POST', `${cmPath()}?dryRun=All`, { body: { metadata: { name: 'Dry_Bad' } } });
    assert.equal(dryInvalid.status, 422);
  });

  it('generateName appends five characters', async () => {
    const { server } = ctx();
    const res = await kubeJson(server, 'POST', cmPath(), { body: { metadata: { generateName: 'gen-' } } });
    assert.equal(res.status, 201);
    assert.match(metaOf(res.body).name, /^gen-[a-z0-9]{5}$/);
  });

  it('Secrets: stringData is folded into base64 data; invalid base64 is a 400', async () => {
    const { server } = ctx();
    const res = await kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { metadata: { name: 'sec' }, type: 'Opaque', data: { a: Buffer.from('x').toString('base64') }, stringData: { b: 'plain' } },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.data, { a: 'eA==', b: Buffer.from('plain').toString('base64') });
    assert.equal(res.body.stringData, undefined);
    const bad = await kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'sec-bad' }, data: { a: 'not base64!' } } });
    assert.equal(bad.status, 400);
  });

  it('an immutable ConfigMap refuses data changes with 422', async () => {
    const { server } = ctx();
    await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true } });
    const change = await kubeJson(server, 'PATCH', cmPath('frozen'), { body: { data: { a: '2' } }, contentType: 'application/merge-patch+json' });
    assert.equal(change.status, 422);
    assert.equal(change.body.reason, 'Invalid');
    const labels = await kubeJson(server, 'PATCH', cmPath('frozen'), {
      body: { metadata: { labels: { ok: 'yes' } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(labels.status, 200);
  });

  it('a malformed label selector is a 400', async () => {
    const { server } = ctx();
    const res = await kubeJson(server, 'GET', `${cmPath()}?labelSelector=${encodeURIComponent('app in (a')}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.reason, 'BadRequest');
  });

  it('a Service gets a cluster IP from the range; a Service without ports is 422', async () => {
    const { server } = ctx();
    const svc = await kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/services`, {
      body: { metadata: { name: 'svc' }, spec: { selector: { app: 'x' }, ports: [{ port: 5432 }] } },
    });
    assert.equal(svc.status, 201, svc.text);
    const spec = svc.body.spec as { clusterIP: string; type: string; ports: Array<{ protocol: string; targetPort: number }> };
    assert.match(spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(spec.type, 'ClusterIP');
    assert.deepEqual([spec.ports[0].protocol, spec.ports[0].targetPort], ['TCP', 5432]);
    const noPorts = await kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/services`, {
      body: { metadata: { name: 'svc-bad' }, spec: { selector: { app: 'x' } } },
    });
    assert.equal(noPorts.status, 422);
  });

  it('Events: created with an involvedObject in the same namespace; a mismatched namespace is 422', async () => {
    const { server } = ctx();
    const event = (name: string, namespace: string) => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace },
      reason: 'Testing',
      message: 'hello',
      type: 'Normal',
      source: { component: 'keelson-operator' },
      firstTimestamp: '2026-11-22T10:00:00Z',
      lastTimestamp: '2026-11-22T10:00:00Z',
      count: 1,
    });
    const ok = await kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/events`, { body: event('ev-ok', NS) });
    assert.equal(ok.status, 201, ok.text);
    const bad = await kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/events`, { body: event('ev-bad', 'elsewhere') });
    // Both refuse an involvedObject from another namespace (was difference D6).
    assert.equal(bad.status, 422);
    assert.deepEqual(
      (bad.body.details as { causes: Array<{ field: string }> }).causes.map((c) => c.field),
      ['involvedObject.namespace'],
    );
    assert.match(String(bad.body.message), /does not match event.namespace/);
    const listed = await kubeJson(server, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent('involvedObject.name=x,reason=Testing')}`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      (listed.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name),
      ['ev-ok'],
    );
  });

  it('a uid in the body pins the object: PUT with another uid is 409, a PATCH (main or /status) 422', async () => {
    const { server } = ctx();
    const otherUid = '00000000-0000-0000-0000-000000000000';
    const cm = await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'uid-pin' }, data: { v: '1' } } });
    const put = await kubeJson(server, 'PUT', cmPath('uid-pin'), { body: { ...cm.body, metadata: { ...(cm.body.metadata as object), uid: otherUid } } });
    assert.equal(put.status, 409, put.text);
    assert.match(String(put.body.message), /Precondition failed: UID in precondition: 0{8}-0{4}-0{4}-0{4}-0{12}, UID in object meta: /);
    const podPath = `/api/v1/namespaces/${NS}/pods`;
    const pod = await kubeJson(server, 'POST', podPath, { body: { metadata: { name: 'uid-pin' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
    const uid = (pod.body.metadata as { uid: string }).uid;
    // The kubelet's status patch names the pod's uid, so a status meant for a deleted pod never
    // lands on its namesake.
    for (const path of [`${podPath}/uid-pin/status`, `${podPath}/uid-pin`]) {
      const stale = await kubeJson(server, 'PATCH', path, {
        body: { metadata: { uid: otherUid, labels: { x: 'y' } }, status: { phase: 'Failed' } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(stale.status, 422, `${path}: ${stale.text}`);
      assert.match(String(stale.body.message), /metadata.uid: Invalid value: "0{8}-0{4}-0{4}-0{4}-0{12}": field is immutable/);
    }
    const fresh = await kubeJson(server, 'PATCH', `${podPath}/uid-pin/status`, {
      body: { metadata: { uid }, status: { phase: 'Running' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal((fresh.body.status as { phase: string }).phase, 'Running');
    await kubeJson(server, 'DELETE', `${podPath}/uid-pin`);
  });

  it('a write without fieldManager or User-Agent is recorded under the manager "unknown"', async () => {
    const { server } = ctx();
    const created = await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'anonymous' }, data: { v: '1' } } });
    assert.equal(created.status, 201, created.text);
    const managers =
      (created.body.metadata as { managedFields?: Array<{ manager: string; operation: string; fieldsV1: Record<string, unknown> }> }).managedFields ?? [];
    assert.deepEqual(
      managers.map((m) => [m.manager, m.operation]),
      [['unknown', 'Update']],
    );
    // The real server also records `".": {}` for the data map itself; the stand-in tracks leaves only (ADR 0301).
    assert.deepEqual((managers[0].fieldsV1['f:data'] as Record<string, unknown>)['f:v'], {});
  });
};
