/** Watches: event order, resume from a resourceVersion, 410 Expired, selector transitions. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installWidgetCrd, widgetPath } from './cases-crd.js';
import { cmPath, type CaseModule } from './context.js';
import { kubeJson, openWatch } from '../support/kube.js';

const rvOf = (body: Record<string, unknown>): string => (body.metadata as { resourceVersion: string }).resourceVersion;

export const watchCases: CaseModule = (ctx) => {
  it('streams ADDED, MODIFIED, DELETED in order and resumes from a resourceVersion', async () => {
    const { server } = ctx();
    const list = await kubeJson(server, 'GET', `${cmPath()}?labelSelector=w%3Dorder`);
    const start = rvOf(list.body);
    const watch = await openWatch(server, `${cmPath()}?watch=1&labelSelector=w%3Dorder&resourceVersion=${start}`);
    try {
      assert.equal(watch.status, 200);
      const created = await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'w-order', labels: { w: 'order' } }, data: { v: '1' } } });
      const updated = await kubeJson(server, 'PATCH', cmPath('w-order'), { body: { data: { v: '2' } }, contentType: 'application/merge-patch+json' });
      await kubeJson(server, 'DELETE', cmPath('w-order'));
      await watch.waitFor(3);
      assert.deepEqual(
        watch.events.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.equal(watch.events[0].object.metadata?.resourceVersion, rvOf(created.body));
      assert.equal(watch.events[1].object.metadata?.resourceVersion, rvOf(updated.body));
      assert.equal(watch.events[0].object.kind, 'ConfigMap');
      assert.equal(watch.events[0].object.apiVersion, 'v1');
    } finally {
      watch.stop();
    }
    // Resuming from the ADDED event's version replays only what came after it.
    const resumed = await openWatch(server, `${cmPath()}?watch=1&labelSelector=w%3Dorder&resourceVersion=${watch.events[0].object.metadata?.resourceVersion}`);
    try {
      await resumed.waitFor(2);
      assert.deepEqual(
        resumed.events.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
      );
    } finally {
      resumed.stop();
    }
  });

  it('a watch from a resourceVersion older than the history ends with an ERROR 410 Expired event', async () => {
    const { server } = ctx();
    // A custom resource's watch cache starts when its CRD is served, so on the real server "1"
    // is older than its history (for built-ins on a fresh server it is not).
    const dir = mkdtempSync(join(tmpdir(), 'keelson-contract-watch-'));
    try {
      await installWidgetCrd(server, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'w-expired' } } });
    server.forgetWatchHistory?.();
    const expired = await openWatch(server, `${widgetPath()}?watch=1&resourceVersion=1`);
    try {
      assert.equal(expired.status, 200);
      await expired.waitFor(1);
      assert.equal(expired.events[0].type, 'ERROR');
      assert.equal(expired.events[0].object.kind, 'Status');
      assert.equal(expired.events[0].object.code, 410);
      assert.equal(expired.events[0].object.reason, 'Expired');
    } finally {
      expired.stop();
    }
  });

  it('label selector transitions turn into ADDED and DELETED events', async () => {
    const { server } = ctx();
    const list = await kubeJson(server, 'GET', cmPath());
    const watch = await openWatch(server, `${cmPath()}?watch=1&labelSelector=phase%3Din&resourceVersion=${rvOf(list.body)}`);
    try {
      await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'w-move', labels: { phase: 'out' } } } });
      const label = (value: string) =>
        kubeJson(server, 'PATCH', cmPath('w-move'), { body: { metadata: { labels: { phase: value } } }, contentType: 'application/merge-patch+json' });
      await label('in');
      await kubeJson(server, 'PATCH', cmPath('w-move'), { body: { data: { touched: 'yes' } }, contentType: 'application/merge-patch+json' });
      const gone = await label('gone');
      await watch.waitFor(3);
      assert.deepEqual(
        watch.events.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      // The previous object (the one that matched) stamped with the new version, as
      // kube-apiserver's watch cache sends it (was difference D2).
      assert.deepEqual((watch.events[2].object.metadata as { labels: unknown }).labels, { phase: 'in' });
      assert.deepEqual(watch.events[2].object.data, { touched: 'yes' });
      assert.equal(watch.events[2].object.metadata?.resourceVersion, rvOf(gone.body));
    } finally {
      watch.stop();
    }
  });

  it('a watch with allowWatchBookmarks stays valid and field selectors filter it', async () => {
    const { server } = ctx();
    const list = await kubeJson(server, 'GET', cmPath());
    const watch = await openWatch(
      server,
      `${cmPath()}?watch=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dw-field&resourceVersion=${rvOf(list.body)}`,
    );
    try {
      await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'w-other' } } });
      await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'w-field' } } });
      await watch.waitFor(1);
      const nonBookmarks = watch.events.filter((e) => e.type !== 'BOOKMARK');
      assert.deepEqual(
        nonBookmarks.map((e) => [e.type, e.object.metadata?.name]),
        [['ADDED', 'w-field']],
      );
    } finally {
      watch.stop();
    }
  });
};
