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
  let reader: CoreV1Api;
  let informer: Informer<V1ConfigMap>;
  const events: Array<[InformerEvent, string]> = [];
  const restarts: string[] = [];
  let resyncs = 0;
  /** The resourceVersion each list asked with ('' = the latest state). */
  const listVersions: string[] = [];
  /** Set to answer the next list with this (an older list, as a lagging server cache could). */
  let staleAnswer: { items: V1ConfigMap[]; resourceVersion: string } | undefined;

  const has = (event: InformerEvent, name: string) => events.some(([e, n]) => e === event && n === name);
  const configMap = (name: string) =>
    writer.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels: { app: 'informer-test' } }, data: { a: '1' } } });

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-informer-'));
    // Writes go through another identity, so refusing the informer's token does not stop them.
    writer = kubeConfigAs(server, 'writer-token', join(dir, 'writer.kubeconfig')).makeApiClient(CoreV1Api);
    reader = server.kubeConfig.makeApiClient(CoreV1Api);
    informer = new Informer<V1ConfigMap>({
      kubeConfig: server.kubeConfig,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      labelSelector: 'app=informer-test',
      list: async (resourceVersion) => {
        listVersions.push(resourceVersion);
        const answer = staleAnswer;
        staleAnswer = undefined;
        if (answer) return answer;
        const list = await reader.listNamespacedConfigMap({
          namespace: ns,
          labelSelector: 'app=informer-test',
          ...(resourceVersion ? { resourceVersion } : {}),
        });
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
    assert.deepEqual(listVersions, [''], 'the first list reads the latest state');
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
    // The relists after the broken watch named the version seen: a list no older than it still shows what was missed.
    assert.ok(
      listVersions.slice(1).every((v) => /^\d+$/.test(v)),
      `list versions: ${listVersions.join(',')}`,
    );
  });

  it('periodic relist hands every object to onResync, asking for a list no older than what it has seen', async () => {
    const before = resyncs;
    const seen = informer
      .list()
      .map((c) => BigInt(c.metadata!.resourceVersion!))
      .reduce((a, b) => (a > b ? a : b));
    await informer.relist();
    assert.equal(resyncs, before + 1);
    const asked = listVersions.at(-1) ?? '';
    assert.match(asked, /^\d+$/, "a periodic relist names a version (served from the API server's watch cache)");
    assert.ok(BigInt(asked) >= seen, `asked ${asked}, seen ${seen}`);
    assert.deepEqual(
      informer
        .list()
        .map((c) => c.metadata?.name)
        .sort(),
      ['after-close', 'after-reset', 'after-start', 'while-down'],
    );
  });

  it('a relist answered from an older cache state neither steps back nor drops newer objects', async () => {
    const older = await reader.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=informer-test' });
    await writer.patchNamespacedConfigMap({ namespace: ns, name: 'after-start', body: [{ op: 'replace', path: '/data/a', value: '3' }] });
    await configMap('after-older-list');
    await eventually(
      'the watch delivered both',
      async () => informer.get(`${ns}/after-start`)?.data?.a === '3' && informer.get(`${ns}/after-older-list`) !== undefined,
    );
    const deletes = events.filter(([e]) => e === 'delete').length;
    staleAnswer = { items: older.items, resourceVersion: older.metadata?.resourceVersion ?? '' };
    await informer.relist();
    assert.equal(informer.get(`${ns}/after-start`)?.data?.a, '3', 'the newer version stays');
    assert.ok(informer.get(`${ns}/after-older-list`), 'an object created after the list stays');
    assert.equal(events.filter(([e]) => e === 'delete').length, deletes, 'no object newer than the list was reported deleted');
  });
});
