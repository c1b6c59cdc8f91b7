import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeConfigAs, kubeJson, kubeRequest, openWatch, startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { generateCertificates } from '../../../../local/apiserver/security/certs.js';
import { pgCluster, pgClusterCrd } from '../fixtures.js';

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

  it("cuts the refused client's open watches", async () => {
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

describe('API server stand-in: refusals by pod identity, lifted over the HTTP hook', () => {
  let server: TestApiServer;
  let dir: string;
  const tokens: Record<string, string> = {};

  /** A token from TokenRequest for the service account `db`, bound to the pod. */
  async function podToken(pod: string): Promise<string> {
    const answer = await kubeJson(server, 'POST', '/api/v1/namespaces/default/serviceaccounts/db/token', {
      body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod } } },
    });
    assert.equal(answer.status, 201);
    return (answer.body.status as { token: string }).token;
  }
  const hook = (path: string, body?: unknown, token = server.token) =>
    kubeJson(server, body === undefined ? 'GET' : 'POST', `/_keelson/faults/${path}`, { token, body });
  const listAs = async (token: string) =>
    (await kubeRequest(server, 'GET', '/api/v1/namespaces/default/configmaps', { token }).catch(() => ({ status: 0 }))).status;

  before(async () => {
    server = await startTestApiServer({ faultInjection: true });
    dir = mkdtempSync(join(tmpdir(), 'keelson-pod-faults-'));
    const core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'db' } } });
    for (const name of ['db-0', 'db-1']) {
      await core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name }, spec: { serviceAccountName: 'db', containers: [{ name: 'c', image: 'x' }] } },
      });
      tokens[name] = await podToken(name);
    }
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses only the pod named, every token bound to it, and cuts its watches; lift restores it', async () => {
    const second = await podToken('db-0');
    const watch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true', { token: tokens['db-0'] });
    const otherWatch = await openWatch(server, '/api/v1/namespaces/default/configmaps?watch=true', { token: tokens['db-1'] });
    const lift = server.faults.refuse({ pod: 'default/db-0', response: 503 });
    await watch.ended;
    assert.equal(await listAs(tokens['db-0']), 503);
    assert.equal(await listAs(second), 503, 'another token of the same pod');
    assert.equal(await listAs(tokens['db-1']), 200, 'the other pod of the same account');
    assert.equal(await listAs(server.token), 200, 'the admin');
    await server.kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'seen-by-db-1' } } });
    await otherWatch.waitFor(1);
    otherWatch.stop();
    assert.deepEqual(server.faults.refusals(), [{ id: lift.id, rule: { pod: 'default/db-0', response: 503 } }]);
    assert.equal(server.faults.lift(lift.id), true);
    assert.equal(await listAs(tokens['db-0']), 200);
    assert.equal(server.faults.lift(lift.id), false, 'already lifted');
  });

  it('refuses a whole service account', async () => {
    const lift = server.faults.refuse({ serviceAccount: 'default/db', response: 403 });
    assert.equal(await listAs(tokens['db-0']), 403);
    assert.equal(await listAs(tokens['db-1']), 403);
    assert.equal(await listAs('some-other-token'), 200);
    lift();
    assert.equal(await listAs(tokens['db-1']), 200);
  });

  it('HTTP hook: refuse answers an id, refusals lists it, lift by id removes it', async () => {
    const refused = await hook('refuse', { pod: 'default/db-1' });
    assert.equal(refused.status, 200);
    const id = String(refused.body.id);
    assert.deepEqual(refused.body.rule, { pod: 'default/db-1' });
    assert.equal(await listAs(tokens['db-1']), 0, 'connection reset (the default response)');
    assert.equal(await listAs(tokens['db-0']), 200);
    assert.deepEqual((await hook('refusals')).body.refusals, [{ id, rule: { pod: 'default/db-1' } }]);
    const lifted = await hook('lift', { id });
    assert.equal(lifted.status, 200);
    assert.equal(await listAs(tokens['db-1']), 200);
    assert.deepEqual((await hook('refusals')).body.refusals, []);
    assert.equal((await hook('lift', { id })).status, 404, 'lifting twice');
  });

  it('HTTP hook: the admin is never refused, so a refusal matching it stays liftable', async () => {
    const refused = await hook('refuse', { token: server.token });
    assert.equal(await listAs(server.token), 0, "the admin's API requests are refused");
    assert.equal((await hook('lift', { id: refused.body.id })).status, 200);
    assert.equal(await listAs(server.token), 200);
  });

  it('HTTP hook: answers only the admin token or admin certificate; 403 for a pod token', async () => {
    assert.equal((await hook('refusals', undefined, tokens['db-0'])).status, 403);
    assert.equal((await hook('refuse', { pod: 'default/db-1' }, tokens['db-0'])).status, 403);
    assert.equal((await hook('refusals', undefined, 'any-token')).status, 403);
    assert.equal((await hook('refusals')).status, 200);
    assert.deepEqual((await hook('refusals')).body.refusals, [], 'the refused attempt added nothing');
    const user = kubeConfigAs(server, { commonName: 'keelson-admin' }, join(dir, 'admin.kubeconfig')).getCurrentUser()!;
    const admin = { cert: Buffer.from(user.certData!, 'base64').toString(), key: Buffer.from(user.keyData!, 'base64').toString() };
    assert.equal(await hookWithCert(admin), 200, 'the admin certificate');
    // The same CN from another CA: the TLS layer lets it in, but it names nobody.
    const forged = generateCertificates(['127.0.0.1'], 'keelson-admin');
    assert.equal(await hookWithCert({ cert: forged.clientCert, key: forged.clientKey }), 403, 'a certificate the stand-in did not sign');
  });

  /** GET refusals with a client certificate (and no token). */
  function hookWithCert(client: { cert: string; key: string }): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const req = httpsRequest(new URL('/_keelson/faults/refusals', server.url), { ca: server.caCert, ...client }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('HTTP hook: a malformed refusal is a 400 naming the field and adds nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /at least one of token, commonName, userAgent, pod, serviceAccount/],
      [{ pod: 'db-0' }, /pod: must be "namespace\/name"/],
      [{ token: 5 }, /token: must be a non-empty string/],
      [{ token: 'x', response: 404 }, /response: must be one of/],
      [{ token: 'x', colour: 'red' }, /colour: unknown field/],
      ['[1]', /the body must be a JSON object/],
    ];
    for (const [body, message] of cases) {
      const answer = await hook('refuse', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.match(String(answer.body.message), message);
    }
    assert.equal((await hook('lift', { id: 7 })).status, 400);
    assert.match(String((await hook('lift', {})).body.message), /^id: /);
    assert.deepEqual((await hook('refusals')).body.refusals, []);
  });
});

describe('API server stand-in: state file', () => {
  it('keeps objects, CRDs and custom resources across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-state-'));
    try {
      const stateFile = join(dir, 'state.json');
      const first = await startTestApiServer({ stateFile });
      await first.kubeConfig
        .makeApiClient(k8s.CoreV1Api)
        .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'kept' }, data: { a: '1' } } });
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
        const created = await second.kubeConfig
          .makeApiClient(k8s.CoreV1Api)
          .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'new' } } });
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
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bin/keelson.ts', 'local', 'apiserver', '--listen', '127.0.0.1:0', '--kubeconfig', kubeconfig, '--http', '--fault-injection'],
      {
        env: { ...process.env, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
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
        execFile(
          'kubectl',
          ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', 'ns', '-o', 'name'],
          { env: { ...process.env, HOME: dir } },
          (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout)),
        ),
      );
      assert.match(namespaces, /namespace\/default/);
      const admin = { Authorization: `Bearer ${/token: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))![1]}` };
      assert.equal((await fetch(`${url}/_keelson/faults/pause`, { method: 'POST', body: '{}' })).status, 403, 'not without the admin token');
      const pause = await fetch(`${url}/_keelson/faults/pause`, { method: 'POST', headers: admin, body: JSON.stringify({ mode: 'unavailable' }) });
      assert.equal(pause.status, 200);
      assert.equal((await fetch(`${url}/version`)).status, 503);
      assert.equal((await fetch(`${url}/_keelson/faults/resume`, { method: 'POST', headers: admin })).status, 200);
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
