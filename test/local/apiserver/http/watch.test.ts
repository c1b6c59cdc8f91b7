import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeRequest, microTime, openWatch, startTestApiServer, type TestApiServer } from '../../../support/kube.js';

const cmPath = '/api/v1/namespaces/default/configmaps';

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('API server stand-in: watch semantics', () => {
  let server: TestApiServer;
  let core: k8s.CoreV1Api;

  before(async () => {
    server = await startTestApiServer({ bookmarkIntervalMs: 150, historyLimit: 200 });
    core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  });
  after(() => server.close());

  it('sends current state as ADDED, then live events, for resourceVersion unset', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w-existing' } } });
    const watch = await openWatch(server, `${cmPath}?watch=true&fieldSelector=metadata.name%3Dw-existing`);
    assert.equal(watch.status, 200);
    await watch.waitFor(1);
    assert.equal(watch.events[0].type, 'ADDED');
    await core.patchNamespacedConfigMap({ name: 'w-existing', namespace: 'default', body: [{ op: 'add', path: '/data', value: { a: '1' } }] });
    await core.deleteNamespacedConfigMap({ name: 'w-existing', namespace: 'default' });
    await watch.waitFor(3);
    assert.deepEqual(
      watch.events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    const rvs = watch.events.map((e) => Number((e.object.metadata as { resourceVersion: string }).resourceVersion));
    assert.ok(rvs[0] < rvs[1] && rvs[1] < rvs[2], `resourceVersions increase: ${rvs.join(',')}`);
    watch.stop();
  });

  it('replays from a resourceVersion and reports 410 Expired once history is gone', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    const from = list.metadata?.resourceVersion as string;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w-replay-1' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w-replay-2' } } });
    const replay = await openWatch(server, `${cmPath}?watch=true&resourceVersion=${from}`);
    await replay.waitFor(2);
    assert.deepEqual(
      replay.events.map((e) => (e.object.metadata as { name: string }).name),
      ['w-replay-1', 'w-replay-2'],
    );
    replay.stop();

    server.faults.compactHistory();
    const expired = await openWatch(server, `${cmPath}?watch=true&resourceVersion=${from}`);
    assert.equal(expired.status, 200);
    await expired.ended;
    assert.equal(expired.events.length, 1);
    assert.equal(expired.events[0].type, 'ERROR');
    assert.equal(expired.events[0].object.code, 410);
    assert.equal(expired.events[0].object.reason, 'Expired');
  });

  it('sends BOOKMARKs only when allowed, and ends at timeoutSeconds', async () => {
    const rv = (await core.listNamespacedConfigMap({ namespace: 'default' })).metadata?.resourceVersion;
    const withBookmarks = await openWatch(server, `${cmPath}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=1`);
    const without = await openWatch(server, `${cmPath}?watch=true&resourceVersion=${rv}&timeoutSeconds=1`);
    await Promise.all([withBookmarks.ended, without.ended]);
    const bookmarks = withBookmarks.events.filter((e) => e.type === 'BOOKMARK');
    assert.ok(bookmarks.length >= 2, `bookmarks: ${bookmarks.length}`);
    assert.ok((bookmarks[0].object.metadata as { resourceVersion: string }).resourceVersion);
    assert.equal(without.events.filter((e) => e.type === 'BOOKMARK').length, 0);
  });

  it('turns label selector transitions into DELETED and ADDED', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w-sel', labels: { role: 'replica' } } } });
    const watch = await openWatch(server, `${cmPath}?watch=true&labelSelector=role%3Dprimary`);
    await core.patchNamespacedConfigMap({ name: 'w-sel', namespace: 'default', body: [{ op: 'replace', path: '/metadata/labels/role', value: 'primary' }] });
    await core.patchNamespacedConfigMap({ name: 'w-sel', namespace: 'default', body: [{ op: 'add', path: '/data', value: { x: '1' } }] });
    await core.patchNamespacedConfigMap({ name: 'w-sel', namespace: 'default', body: [{ op: 'replace', path: '/metadata/labels/role', value: 'replica' }] });
    await watch.waitFor(3);
    assert.deepEqual(
      watch.events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    // Like the real watch cache: the last matching content, stamped with the new resourceVersion.
    const gone = watch.events[2].object as { metadata: { labels: Record<string, string>; resourceVersion: string }; data: unknown };
    assert.equal(gone.metadata.labels.role, 'primary');
    assert.deepEqual(gone.data, { x: '1' });
    assert.equal(gone.metadata.resourceVersion, (await core.readNamespacedConfigMap({ name: 'w-sel', namespace: 'default' })).metadata?.resourceVersion);
    watch.stop();
  });

  it('answers kubectl-style Table watches with one-row Tables', async () => {
    const watch = await openWatch(server, `${cmPath}?watch=true&fieldSelector=metadata.name%3Dw-table`, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w-table' }, data: { a: '1', b: '2' } } });
    await watch.waitFor(1);
    const table = watch.events[0].object as { kind: string; rows: Array<{ cells: unknown[] }>; columnDefinitions: Array<{ name: string }> };
    assert.equal(table.kind, 'Table');
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Data', 'Age'],
    );
    assert.deepEqual(table.rows[0].cells.slice(0, 2), ['w-table', 2]);
    watch.stop();
  });

  it('keeps a client-node informer complete across forced watch drops', async () => {
    const seen = new Map<string, string[]>();
    const record = (kind: string) => (o: k8s.V1ConfigMap) => {
      const name = o.metadata?.name as string;
      if (!name.startsWith('inf-')) return;
      seen.set(name, [...(seen.get(name) ?? []), kind]);
    };
    const informer = k8s.makeInformer(server.kubeConfig, cmPath, () => core.listNamespacedConfigMap({ namespace: 'default' }));
    informer.on('add', record('add'));
    informer.on('update', record('update'));
    informer.on('delete', record('delete'));
    let errors = 0;
    let stopped = false;
    informer.on('error', () => {
      errors += 1;
      // The documented client-node pattern: restart after an error.
      setTimeout(() => {
        if (!stopped) void informer.start();
      }, 50);
    });
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-a' } } });
      await until(() => seen.has('inf-a'), 'inf-a added');

      // Clean close: the informer re-watches from its last resourceVersion by itself.
      assert.ok(server.faults.dropWatches({ mode: 'close' }) >= 1);
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-b' } } });
      await core.patchNamespacedConfigMap({ name: 'inf-a', namespace: 'default', body: [{ op: 'add', path: '/data', value: { v: '1' } }] });

      // Broken connection: the informer reports an error and is restarted (list + watch).
      await until(() => seen.has('inf-b') && (seen.get('inf-a') ?? []).includes('update'), 'events after clean drop');
      assert.ok(server.faults.dropWatches({ mode: 'reset' }) >= 1);
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-c' } } });
      await core.deleteNamespacedConfigMap({ name: 'inf-b', namespace: 'default' });
      await until(() => seen.has('inf-c') && (seen.get('inf-b') ?? []).includes('delete'), 'events after reset');
      assert.ok(errors >= 1, 'the reset surfaced as an informer error');
      assert.deepEqual(seen.get('inf-a'), ['add', 'update']);
      assert.deepEqual(seen.get('inf-b'), ['add', 'delete']);
      assert.deepEqual(seen.get('inf-c'), ['add']);
      const cached = informer
        .list('default')
        .map((o) => o.metadata?.name)
        .filter((n) => n?.startsWith('inf-'))
        .sort();
      assert.deepEqual(cached, ['inf-a', 'inf-c']);
    } finally {
      stopped = true;
      await informer.stop();
    }
  });

  it('lets exactly one of two clients win each Lease compare-and-swap round', async () => {
    const coordination = server.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const other = new k8s.KubeConfig();
    other.loadFromFile(server.kubeconfigPath);
    const coordination2 = other.makeApiClient(k8s.CoordinationV1Api);
    await coordination.createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: 'race' }, spec: { leaseDurationSeconds: 10, leaseTransitions: 0 } },
    });
    let transitions = 0;
    for (let round = 0; round < 10; round += 1) {
      const [a, b] = await Promise.all([
        coordination.readNamespacedLease({ name: 'race', namespace: 'default' }),
        coordination2.readNamespacedLease({ name: 'race', namespace: 'default' }),
      ]);
      const attempt = (api: k8s.CoordinationV1Api, lease: k8s.V1Lease, holder: string) =>
        api.replaceNamespacedLease({
          name: 'race',
          namespace: 'default',
          body: {
            ...lease,
            spec: { ...lease.spec, holderIdentity: holder, renewTime: microTime(), leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 },
          },
        });
      const results = await Promise.allSettled([attempt(coordination, a, 'a'), attempt(coordination2, b, 'b')]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      assert.equal(won.length, 1, `round ${round}: one winner`);
      assert.equal((lost[0] as PromiseRejectedResult).reason.code, 409);
      transitions += 1;
    }
    const final = await coordination.readNamespacedLease({ name: 'race', namespace: 'default' });
    assert.equal(final.spec?.leaseTransitions, transitions);
  });

  it('rejects a watch with a malformed selector before streaming', async () => {
    const res = await kubeRequest(server, 'GET', `${cmPath}?watch=true&fieldSelector=spec.nope%3D1`);
    assert.equal(res.status, 400);
    assert.equal((res.body as { message: string }).message, '"spec.nope" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });
});
