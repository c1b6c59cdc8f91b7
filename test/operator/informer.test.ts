import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { Informer, type InformerEvent } from '../../lib/kube/informer.js';
import { createLogger } from '../../lib/log.js';
import { kubeConfigAs, startTestApiServer, type TestApiServer } from '../support/kube.js';
import { eventually } from './support.js';

const ns = 'default';
const logger = createLogger({ name: 'informer-test', level: process.env.LOG_LEVEL ?? 'silent' });

describe('Informer (lib/kube/informer.ts) against the stand-in', () => {
  let server: TestApiServer;
  let dir: string;
  let writer: CoreV1Api;
  let informer: Informer<V1ConfigMap>;
  const events: Array<[InformerEvent, string]> = [];
  const restarts: string[] = [];
  let resyncs = 0;

  const has = (event: InformerEvent, name: string) => events.some(([e, n]) => e === event && n === name);
  const configMap = (name: string) => writer.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels: { app: 'informer-test' } }, data: { a: '1' } } });

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-informer-'));
    // Writes go through another identity, so refusing the informer's token does not stop them.
    writer = kubeConfigAs(server, 'writer-token', join(dir, 'writer.kubeconfig')).makeApiClient(CoreV1Api);
    const reader = server.kubeConfig.makeApiClient(CoreV1Api);
    informer = new Informer<V1ConfigMap>({
      kubeConfig: server.kubeConfig,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      labelSelector: 'app=informer-test',
      list: async () => {
        const list = await reader.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=informer-test' });
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
      },
      relistIntervalMs: 60_000,
      logger,
      onEvent: (event, object) => events.push([event, object.metadata!.name!]),
      onResync: () => (resyncs += 1),
      onWatchRestart: (reason) => restarts.push(reason),
    });
    await configMap('before-start');
    await informer.start();
  });

  after(async () => {
    informer?.stop();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists first, then follows the watch', async () => {
    assert.ok(informer.hasSynced);
    assert.ok(has('add', 'before-start'));
    await configMap('after-start');
    await eventually('add after-start', async () => has('add', 'after-start'));
    await writer.patchNamespacedConfigMap({ namespace: ns, name: 'after-start', body: [{ op: 'replace', path: '/data/a', value: '2' }] });
    await eventually('update after-start', async () => has('update', 'after-start'));
    assert.equal(informer.get(`${ns}/after-start`)?.data?.a, '2');
  });

  it('re-watches after the server closes or resets the stream', async () => {
    server.faults.dropWatches({ mode: 'close' });
    await eventually('restart after close', async () => restarts.includes('closed'));
    await configMap('after-close');
    await eventually('add after-close', async () => has('add', 'after-close'));
    server.faults.dropWatches({ mode: 'reset' });
    await configMap('after-reset');
    await eventually('add after-reset', async () => has('add', 'after-reset'), 15_000);
  });

  it('relists on 410 Gone and reports changes missed while the watch was down', async () => {
    const unrefuse = server.faults.refuse({ token: server.token, response: 503 });
    await writer.deleteNamespacedConfigMap({ namespace: ns, name: 'before-start' });
    await configMap('while-down');
    server.faults.compactHistory();
    const resyncsBefore = resyncs;
    unrefuse();
    await eventually('missed delete seen', async () => has('delete', 'before-start'), 20_000);
    await eventually('missed add seen', async () => has('add', 'while-down'), 20_000);
    assert.ok(resyncs > resyncsBefore, 'a relist ran');
    assert.equal(informer.get(`${ns}/before-start`), undefined);
    assert.ok(restarts.includes('error') || restarts.includes('expired'), `restart reasons: ${restarts.join(',')}`);
  });

  it('periodic relist hands every object to onResync', async () => {
    const before = resyncs;
    await informer.relist();
    assert.equal(resyncs, before + 1);
    assert.deepEqual(informer.list().map((c) => c.metadata?.name).sort(), ['after-close', 'after-reset', 'after-start', 'while-down']);
  });
});
