/** CRUD, 409/422 errors, selectors, paging, the four patch types and finalizers. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type CaseModule, cmPath, eventually, NS } from './context.js';
import { kubeJson } from '../support/kube.js';

const configMap = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data,
});

export const coreCases: CaseModule = (ctx) => {
  it('create, get, replace, delete with 409 AlreadyExists and 409 Conflict on a stale resourceVersion', async () => {
    const { server } = ctx();
    const created = await kubeJson(server, 'POST', cmPath(), { body: configMap('crud', { a: '1' }) });
    assert.equal(created.status, 201);
    const meta = created.body.metadata as { uid: string; resourceVersion: string; creationTimestamp: string };
    assert.ok(meta.uid && meta.resourceVersion && meta.creationTimestamp);
    const again = await kubeJson(server, 'POST', cmPath(), { body: configMap('crud') });
    assert.equal(again.status, 409);
    assert.equal(again.body.kind, 'Status');
    assert.equal(again.body.reason, 'AlreadyExists');
    // Go omits the empty core group (omitempty); the stand-in too (was difference D1).
    assert.deepEqual(again.body.details, { name: 'crud', kind: 'configmaps' });
    const missing = await kubeJson(server, 'GET', cmPath('never-there'));
    assert.deepEqual(missing.body.details, { name: 'never-there', kind: 'configmaps' });
    const replaced = await kubeJson(server, 'PUT', cmPath('crud'), { body: { ...created.body, data: { a: '2' } } });
    assert.equal(replaced.status, 200);
    assert.notEqual((replaced.body.metadata as { resourceVersion: string }).resourceVersion, meta.resourceVersion);
    const stale = await kubeJson(server, 'PUT', cmPath('crud'), { body: { ...created.body, data: { a: '3' } } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.match(String(stale.body.message), /the object has been modified; please apply your changes to the latest version and try again/);
    const got = await kubeJson(server, 'GET', cmPath('crud'));
    assert.deepEqual(got.body.data, { a: '2' });
    const deleted = await kubeJson(server, 'DELETE', cmPath('crud'));
    assert.equal(deleted.status, 200);
    const gone = await kubeJson(server, 'GET', cmPath('crud'));
    assert.equal(gone.status, 404);
    assert.equal(gone.body.reason, 'NotFound');
    assert.equal(gone.body.message, 'configmaps "crud" not found');
  });

  it('answers 422 Invalid with field paths for a bad name and a bad label value', async () => {
    const { server } = ctx();
    const bad = await kubeJson(server, 'POST', cmPath(), { body: configMap('Bad_Name') });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.reason, 'Invalid');
    const causes = (bad.body.details as { causes: Array<{ field: string; reason: string }> }).causes;
    assert.ok(
      causes.some((c) => c.field === 'metadata.name' && c.reason === 'FieldValueInvalid'),
      JSON.stringify(causes),
    );
    const badLabel = await kubeJson(server, 'POST', cmPath(), { body: configMap('bad-label', {}, { app: 'no spaces allowed' }) });
    assert.equal(badLabel.status, 422);
    const labelCauses = (badLabel.body.details as { causes: Array<{ field: string }> }).causes;
    assert.ok(
      labelCauses.some((c) => c.field === 'metadata.labels'),
      JSON.stringify(labelCauses),
    );
  });

  it('filters lists by label and field selectors and rejects an unsupported field selector', async () => {
    const { server } = ctx();
    for (const [name, app] of [
      ['sel-a', 'a'],
      ['sel-b', 'b'],
      ['sel-c', 'c'],
    ]) {
      assert.equal((await kubeJson(server, 'POST', cmPath(), { body: configMap(name, {}, { app, tier: 'sel' }) })).status, 201);
    }
    assert.equal((await kubeJson(server, 'POST', cmPath(), { body: configMap('sel-none', {}, { tier: 'sel' }) })).status, 201);
    const names = async (query: string): Promise<string[]> => {
      const res = await kubeJson(server, 'GET', `${cmPath()}?${query}`);
      assert.equal(res.status, 200, res.text);
      return (res.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name).sort();
    };
    assert.deepEqual(await names('labelSelector=app%3Da'), ['sel-a']);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent('app in (a,b)')}`), ['sel-a', 'sel-b']);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent('tier=sel,!app')}`), ['sel-none']);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent('tier=sel,app!=a')}`), ['sel-b', 'sel-c', 'sel-none']);
    assert.deepEqual(await names('fieldSelector=metadata.name%3Dsel-c'), ['sel-c']);
    assert.deepEqual(await names(`fieldSelector=${encodeURIComponent(`metadata.namespace=${NS},metadata.name!=sel-c`)}&labelSelector=tier%3Dsel`), [
      'sel-a',
      'sel-b',
      'sel-none',
    ]);
    const unsupported = await kubeJson(server, 'GET', `${cmPath()}?fieldSelector=data.a%3D1`);
    assert.equal(unsupported.status, 400);
    assert.equal(unsupported.body.reason, 'BadRequest');
  });

  it('pages a list with limit and continue', async () => {
    const { server } = ctx();
    for (const i of [1, 2, 3, 4, 5]) await kubeJson(server, 'POST', cmPath(), { body: configMap(`page-${i}`, {}, { tier: 'page' }) });
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const res = await kubeJson(server, 'GET', `${cmPath()}?labelSelector=tier%3Dpage&limit=2${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      assert.equal(res.status, 200);
      const items = res.body.items as Array<{ metadata: { name: string } }>;
      assert.ok(items.length <= 2);
      seen.push(...items.map((i) => i.metadata.name));
      token = (res.body.metadata as { continue?: string }).continue || undefined;
      pages += 1;
    } while (token && pages < 10);
    assert.deepEqual(seen, ['page-1', 'page-2', 'page-3', 'page-4', 'page-5']);
    assert.equal(pages, 3);
  });

  it('applies JSON merge, JSON and strategic merge patches', async () => {
    const { server } = ctx();
    await kubeJson(server, 'POST', cmPath(), { body: configMap('patch', { keep: '1', drop: '2' }) });
    const merged = await kubeJson(server, 'PATCH', cmPath('patch'), {
      body: { data: { drop: null, added: '3' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(merged.status, 200);
    assert.deepEqual(merged.body.data, { keep: '1', added: '3' });
    const json = await kubeJson(server, 'PATCH', cmPath('patch'), {
      body: [
        { op: 'replace', path: '/data/keep', value: 'x' },
        { op: 'add', path: '/metadata/labels', value: { l: 'v' } },
        { op: 'remove', path: '/data/added' },
      ],
      contentType: 'application/json-patch+json',
    });
    assert.equal(json.status, 200, json.text);
    assert.deepEqual(json.body.data, { keep: 'x' });
    assert.deepEqual((json.body.metadata as { labels: unknown }).labels, { l: 'v' });
    const failedTest = await kubeJson(server, 'PATCH', cmPath('patch'), {
      body: [{ op: 'test', path: '/data/keep', value: 'nope' }],
      contentType: 'application/json-patch+json',
    });
    assert.ok(failedTest.status >= 400 && failedTest.status < 500, `${failedTest.status}`);

    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'smp' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'smp' } },
        template: {
          metadata: { labels: { app: 'smp' } },
          spec: {
            containers: [
              { name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }] },
              { name: 'b', image: 'b:1' },
            ],
          },
        },
      },
    };
    assert.equal((await kubeJson(server, 'POST', `/apis/apps/v1/namespaces/${NS}/deployments`, { body: deployment })).status, 201);
    const smp = await kubeJson(server, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/smp`, {
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'b', image: 'b:2' },
                { name: 'a', env: [{ name: 'Y', value: '2' }] },
              ],
            },
          },
        },
      },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(smp.status, 200, smp.text);
    const containers = (smp.body.spec as { template: { spec: { containers: Array<{ name: string; image: string; env?: Array<{ name: string }> }> } } }).template
      .spec.containers;
    const byName = Object.fromEntries(containers.map((c) => [c.name, c]));
    assert.equal(byName.a.image, 'a:1');
    assert.equal(byName.b.image, 'b:2');
    assert.deepEqual(byName.a.env?.map((e) => e.name).sort(), ['X', 'Y']);
    assert.equal((smp.body.metadata as { generation: number }).generation, 2);
  });

  it('server-side apply: owns fields per manager, 409 on a conflict, force takes over', async () => {
    const { server } = ctx();
    const apply = (manager: string, data: Record<string, string>, force = false) =>
      kubeJson(server, 'PATCH', `${cmPath('ssa')}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: NS }, data },
        contentType: 'application/apply-patch+yaml',
      });
    const first = await apply('alice', { a: '1', shared: 'alice' });
    assert.equal(first.status, 201, first.text);
    const managers = (first.body.metadata as { managedFields: Array<{ manager: string; operation: string }> }).managedFields;
    assert.deepEqual(
      managers.map((m) => [m.manager, m.operation]),
      [['alice', 'Apply']],
    );
    const conflict = await apply('bob', { shared: 'bob' });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.reason, 'Conflict');
    const causes = (conflict.body.details as { causes: Array<{ field: string; reason: string }> }).causes;
    assert.deepEqual(
      causes.map((c) => [c.reason, c.field]),
      [['FieldManagerConflict', '.data.shared']],
    );
    const forced = await apply('bob', { shared: 'bob', b: '2' }, true);
    assert.equal(forced.status, 200);
    assert.deepEqual(forced.body.data, { a: '1', shared: 'bob', b: '2' });
    // alice re-applies without `shared`: she no longer owns it, so it stays; dropping `a` removes it.
    const again = await apply('alice', { shared: 'bob' });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body.data, { shared: 'bob', b: '2' });
  });

  it('finalizers hold a deleted object with deletionTimestamp until they are removed', async () => {
    const { server } = ctx();
    const body = { ...configMap('final'), metadata: { name: 'final', finalizers: ['keelson.io/test'] } };
    assert.equal((await kubeJson(server, 'POST', cmPath(), { body })).status, 201);
    const deleting = await kubeJson(server, 'DELETE', cmPath('final'));
    assert.equal(deleting.status, 200);
    const held = await kubeJson(server, 'GET', cmPath('final'));
    assert.equal(held.status, 200);
    const meta = held.body.metadata as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number; finalizers: string[] };
    assert.match(String(meta.deletionTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(meta.deletionGracePeriodSeconds, 0);
    // A finalizer cannot be added once deletion started.
    const add = await kubeJson(server, 'PATCH', cmPath('final'), {
      body: { metadata: { finalizers: ['keelson.io/test', 'keelson.io/late'] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(add.status, 422, add.text);
    const release = await kubeJson(server, 'PATCH', cmPath('final'), { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    assert.equal(release.status, 200);
    await eventually('finalized object to disappear', async () => ((await kubeJson(server, 'GET', cmPath('final'))).status === 404 ? true : undefined), 5000);
  });
};
