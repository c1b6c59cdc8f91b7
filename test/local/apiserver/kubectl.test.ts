import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { kubeRequest, startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { runProcess } from '../../support/run-process.js';
import { pgCluster, pgClusterCrd } from './fixtures.js';

/** Real kubectl against the stand-in, with its own discovery/OpenAPI cache per test run. */
describe('API server stand-in: kubectl unmodified', () => {
  let server: TestApiServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  const kubectl = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const { code, stdout, stderr } = await runProcess('kubectl', ['--cache-dir', join(dir, 'cache'), ...args], { env, timeoutMs: 60_000 });
    return { code: code ?? 1, stdout, stderr };
  };
  const ok = async (...args: string[]): Promise<string> => {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const file = (name: string, docs: unknown[]): string => {
    const path = join(dir, name);
    writeFileSync(path, docs.map((d) => stringify(d)).join('---\n'));
    return path;
  };

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-kubectl-'));
    env = { ...process.env, KUBECONFIG: server.kubeconfigPath, HOME: dir };
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies a CRD and a custom resource, and prints the printer columns', async () => {
    assert.match(
      await ok('apply', '-f', file('crd.yaml', [pgClusterCrd])),
      /customresourcedefinition.apiextensions.k8s.io\/pgclusters.demo.example.com created/,
    );
    assert.match(await ok('apply', '-f', file('cluster.yaml', [pgCluster('demo')])), /pgcluster.demo.example.com\/demo created/);
    const table = await ok('get', 'pgc');
    const [header, row] = table.trim().split('\n');
    assert.deepEqual(header.trim().split(/\s+/), ['NAME', 'INSTANCES', 'PHASE', 'READY', 'AGE']);
    assert.match(row, /^demo\s+3\s+/);
    const yaml = await ok('get', 'pgcluster', 'demo', '-o', 'jsonpath={.spec.version}');
    assert.equal(yaml, '15', 'server-side defaulting is visible to kubectl');
  });

  it('re-applies changes client-side and rejects invalid objects with the server message', async () => {
    assert.match(await ok('apply', '-f', file('cluster.yaml', [pgCluster('demo', { instances: 4 })])), /configured/);
    assert.equal(await ok('get', 'pgc', 'demo', '-o', 'jsonpath={.spec.instances} {.metadata.generation}'), '4 2');
    const bad = await kubectl('apply', '-f', file('bad.yaml', [pgCluster('bad', { instances: 0 })]));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.instances in body should be greater than or equal to 1/);
    const strict = await kubectl('apply', '-f', file('strict.yaml', [pgCluster('strict', { instances: 1, typo: true })]));
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /unknown field "spec.typo"/);
  });

  it('explains custom resource fields from the published schema', async () => {
    const explained = await ok('explain', 'pgcluster.spec.instances');
    assert.match(explained, /KIND:\s+PgCluster/);
    assert.match(explained, /FIELD:\s+instances <integer>/);
  });

  it('scales through the scale subresource', async () => {
    assert.match(await ok('scale', 'pgc', 'demo', '--replicas=5'), /scaled/);
    assert.equal(await ok('get', 'pgc', 'demo', '-o', 'jsonpath={.spec.instances}'), '5');
  });

  it('describes an object with its events', async () => {
    const uid = await ok('get', 'pgc', 'demo', '-o', 'jsonpath={.metadata.uid}');
    const event = {
      metadata: { name: 'demo.1' },
      involvedObject: { apiVersion: 'demo.example.com/v1', kind: 'PgCluster', name: 'demo', namespace: 'default', uid },
      reason: 'Bootstrapped',
      message: 'primary elected',
      type: 'Normal',
      count: 1,
    };
    assert.equal((await kubeRequest(server, 'POST', '/api/v1/namespaces/default/events', { body: event })).status, 201);
    const described = await ok('describe', 'pgc', 'demo');
    assert.match(described, /Name:\s+demo/);
    assert.match(described, /Instances:\s+5/);
    assert.match(described, /Bootstrapped\s+.*primary elected/);
  });

  it('streams changes with get -w', async () => {
    const child = spawn('kubectl', ['--cache-dir', join(dir, 'cache'), 'get', 'pgc', '-w'], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 15_000;
      while (!/demo\s+5/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await ok('patch', 'pgc', 'demo', '--type=merge', '-p', '{"spec":{"instances":6}}');
      while (!/demo\s+6/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.match(out, /NAME\s+INSTANCES/);
      assert.match(out, /demo\s+6/, `watch output: ${out}`);
      assert.equal(out.match(/NAME\s+INSTANCES/g)?.length, 1, 'the header is printed once');
    } finally {
      child.kill();
    }
  });

  it('applies server-side, reporting field conflicts and honouring --force-conflicts', async () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'ssa', namespace: 'default' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
    };
    assert.match(await ok('apply', '--server-side', '-f', file('lease.yaml', [lease])), /serverside-applied/);
    const leases = await ok('get', 'leases');
    assert.match(leases, /NAME\s+HOLDER\s+AGE/);
    assert.match(leases, /ssa\s+me/);
    const managers = JSON.parse(await ok('get', 'lease', 'ssa', '-o', 'json', '--show-managed-fields')) as {
      metadata: { managedFields: Array<{ manager: string; operation: string }> };
    };
    assert.deepEqual(
      managers.metadata.managedFields.map((m) => `${m.manager}/${m.operation}`),
      ['kubectl/Apply'],
    );
    // Another manager changes a field kubectl owns: a plain re-apply with another value conflicts.
    const other = await kubeRequest(server, 'PATCH', '/apis/coordination.k8s.io/v1/namespaces/default/leases/ssa?fieldManager=operator', {
      contentType: 'application/merge-patch+json',
      body: { spec: { leaseDurationSeconds: 30 } },
    });
    assert.equal(other.status, 200);
    const changed = { ...lease, spec: { ...lease.spec, leaseDurationSeconds: 20 } };
    const conflict = await kubectl('apply', '--server-side', '-f', file('lease2.yaml', [changed]));
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "operator"/);
    assert.match(await ok('apply', '--server-side', '--force-conflicts', '-f', file('lease2.yaml', [changed])), /serverside-applied/);
    assert.equal(await ok('get', 'lease', 'ssa', '-o', 'jsonpath={.spec.leaseDurationSeconds}'), '20');
    // Dropping a field from the applied config removes it.
    const trimmed = { ...lease, spec: { holderIdentity: 'me' } };
    await ok('apply', '--server-side', '-f', file('lease3.yaml', [trimmed]));
    assert.equal(await ok('get', 'lease', 'ssa', '-o', 'jsonpath={.spec.leaseDurationSeconds}'), '');
  });

  it('shows pod IPs and nodes with -o wide', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'default' },
      spec: { nodeName: 'local', containers: [{ name: 'web', image: 'nginx' }] },
    };
    await ok('apply', '-f', file('pod.yaml', [pod]));
    await kubeRequest(server, 'PATCH', '/api/v1/namespaces/default/pods/web-0/status', {
      contentType: 'application/merge-patch+json',
      body: { status: { phase: 'Running', podIP: '127.0.0.7' } },
    });
    const [header, row] = (await ok('get', 'pods', '-o', 'wide')).trim().split('\n');
    assert.deepEqual(header.trim().split(/\s+/), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE']);
    assert.match(row, /^web-0\s+0\/1\s+Running\s+0\s+\S+\s+127\.0\.0\.7\s+local/);
    assert.doesNotMatch(await ok('get', 'pods'), /127\.0\.0\.7/, 'IP only with -o wide');
  });

  it('accepts the protobuf bodies of kubectl create configmap/secret/namespace', async () => {
    await ok('create', 'namespace', 'imperative');
    assert.equal(await ok('get', 'ns', 'imperative', '-o', 'jsonpath={.spec.finalizers}'), '["kubernetes"]');
    await ok('create', 'configmap', 'settings', '-n', 'imperative', '--from-literal=a=1', '--from-literal=b=two');
    assert.equal(await ok('get', 'cm', 'settings', '-n', 'imperative', '-o', 'jsonpath={.data.a},{.data.b}'), '1,two');
    await ok('create', 'secret', 'generic', 'creds', '-n', 'imperative', '--from-literal=password=s3cret');
    assert.equal(Buffer.from(await ok('get', 'secret', 'creds', '-n', 'imperative', '-o', 'jsonpath={.data.password}'), 'base64').toString(), 's3cret');
    const unsupported = await kubectl('create', 'deployment', 'web', '--image=nginx');
    assert.notEqual(unsupported.code, 0);
    assert.match(unsupported.stderr, /protobuf: kind Deployment is not supported/);
  });

  it('answers auth can-i and whoami (no authorization in the stand-in)', async () => {
    assert.equal((await ok('auth', 'can-i', 'delete', 'pods')).trim(), 'yes');
    assert.match(await ok('auth', 'whoami'), /Username\s+token:[0-9a-f]{8}\s/);
  });

  it('deletes, waiting for finalizers', async () => {
    await ok('patch', 'pgc', 'demo', '--type=merge', '-p', '{"metadata":{"finalizers":["demo.example.com/cleanup"]}}');
    const deleting = spawn('kubectl', ['--cache-dir', join(dir, 'cache'), 'delete', 'pgc', 'demo'], { env });
    const exited = new Promise<number>((resolve) => deleting.on('exit', (code) => resolve(code ?? 1)));
    const deadline = Date.now() + 10_000;
    let ts = '';
    while (!ts && Date.now() < deadline) {
      ts = await ok('get', 'pgc', 'demo', '-o', 'jsonpath={.metadata.deletionTimestamp}');
      if (!ts) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(ts, 'deletionTimestamp is set while the finalizer is pending');
    await ok('patch', 'pgc', 'demo', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
    assert.equal(await exited, 0);
    const gone = await kubectl('get', 'pgc', 'demo');
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /NotFound|not found/);
  });
});
