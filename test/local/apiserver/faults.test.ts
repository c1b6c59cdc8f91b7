import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeConfigAs, kubeRequest, openWatch, startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { pgCluster, pgClusterCrd } from './fixtures.js';

describe('API server stand-in: fault injection', () => {
  let server: TestApiServer;
  let dir: string;
  let core: k8s.CoreV1Api;

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-faults-'));
    core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses one client identity while others keep working', async () => {
    const victim = kubeConfigAs(server, 'node-1-token', join(dir, 'victim.kubeconfig')).makeApiClient(k8s.CoreV1Api);
    await victim.listNamespace();
    const undo = server.faults.refuse({ token: 'node-1-token' });
    await assert.rejects(victim.listNamespace());
    await core.listNamespace();
    undo();
    await victim.listNamespace();
    const undo503 = server.faults.refuse({ token: 'node-1-token', response: 503 });
    const refused = await kubeRequest(server, 'GET', '/api/v1/namespaces', { token: 'node-1-token' });
    assert.equal(refused.status, 503);
    undo503();
  });

  it('tells clients apart by client certificate CN', async () => {
    const byCert = kubeConfigAs(server, { commonName: 'ha-node-2' }, join(dir, 'cert.kubeconfig')).makeApiClient(k8s.CoreV1Api);
    await byCert.listNamespace();
    const undo = server.faults.refuse({ commonName: 'ha-node-2', response: 403 });
    await assert.rejects(byCert.listNamespace(), (e) => (e as { code?: number }).code === 403);
    await core.listNamespace();
    undo();
    await byCert.listNamespace();
  });

  it('cuts the refused client\'s open watches', async () => {
    const watch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true', { token: 'node-2-token' });
    const other = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true');
    const undo = server.faults.refuse({ token: 'node-2-token' });
    await watch.ended;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after-cut' } } });
    await other.waitFor(1);
    assert.equal(other.events[0].type, 'ADDED');
    assert.equal(watch.events.length, 0);
    other.stop();
    undo();
  });

  it('pauses the whole server: requests wait and watch events are held until resume', async () => {
    const watch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dpaused');
    server.faults.pause();
    let answered = false;
    const pending = kubeRequest(server, 'GET', '/api/v1/namespaces/default/configmaps').then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(answered, false, 'no answer while paused');
    server.faults.resume();
    assert.equal((await pending).status, 200);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'paused' } } });
    await watch.waitFor(1);
    server.faults.pause();
    const held = kubeRequest(server, 'DELETE', '/api/v1/namespaces/default/configmaps/paused');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(watch.events.length, 1, 'no event while paused');
    server.faults.resume();
    assert.equal((await held).status, 200);
    await watch.waitFor(2);
    assert.equal(watch.events[1].type, 'DELETED');
    watch.stop();

    server.faults.pause('unavailable');
    assert.equal((await kubeRequest(server, 'GET', '/version')).status, 503);
    server.faults.resume();
  });
});

describe('API server stand-in: state file', () => {
  it('keeps objects, CRDs and custom resources across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-state-'));
    try {
      const stateFile = join(dir, 'state.json');
      const first = await startTestApiServer({ stateFile });
      await first.kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'kept' }, data: { a: '1' } } });
      assert.equal((await kubeRequest(first, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: pgClusterCrd })).status, 201);
      assert.equal((await kubeRequest(first, 'POST', '/apis/demo.example.com/v1/namespaces/default/pgclusters', { body: pgCluster('kept') })).status, 201);
      const rvBefore = Number((await first.kubeConfig.makeApiClient(k8s.CoreV1Api).listNamespace()).metadata?.resourceVersion);
      await first.close();

      const second = await startTestApiServer({ stateFile });
      try {
        const cm = await second.kubeConfig.makeApiClient(k8s.CoreV1Api).readNamespacedConfigMap({ name: 'kept', namespace: 'default' });
        assert.deepEqual(cm.data, { a: '1' });
        const cr = await kubeRequest(second, 'GET', '/apis/demo.example.com/v1/namespaces/default/pgclusters/kept');
        assert.equal(cr.status, 200);
        const created = await second.kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'new' } } });
        assert.ok(Number(created.metadata?.resourceVersion) > rvBefore, 'resourceVersion keeps growing');
        // A watch resumed from a resourceVersion of the previous run must relist (410).
        const stale = await openWatch(second, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rvBefore}`);
        await stale.ended;
        assert.equal(stale.events[0]?.object.code, 410);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('keelson local apiserver (CLI)', () => {
  it('serves plain HTTP with a kubeconfig kubectl can use, the fault hook, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', 'local', 'apiserver', '--listen', '127.0.0.1:0', '--kubeconfig', kubeconfig, '--http', '--fault-injection'], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.startsWith('{') && l.includes('"url"'));
          if (line) resolve((JSON.parse(line) as { url: string }).url);
        });
        child.once('exit', (code) => reject(new Error(`apiserver exited early with ${code}`)));
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const namespaces = await new Promise<string>((resolve, reject) =>
        execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', 'ns', '-o', 'name'], { env: { ...process.env, HOME: dir } }, (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout))),
      );
      assert.match(namespaces, /namespace\/default/);
      const pause = await fetch(`${url}/_keelson/faults/pause`, { method: 'POST', body: JSON.stringify({ mode: 'unavailable' }) });
      assert.equal(pause.status, 200);
      assert.equal((await fetch(`${url}/version`)).status, 503);
      assert.equal((await fetch(`${url}/_keelson/faults/resume`, { method: 'POST' })).status, 200);
      assert.equal((await fetch(`${url}/version`)).status, 200);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
