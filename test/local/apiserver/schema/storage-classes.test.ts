/**
 * The stand-in's StorageClass rules beyond what the contract suite (test/oracle/cases-storage.ts)
 * checks on both servers: several default classes, the pre-1.6 class annotation, a class deleted
 * under a Bound claim, growth through the /status endpoint, and `kubectl get sc`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { kubeJson, startTestApiServer, type TestApiServer } from '../../../support/kube.js';

const classes = '/apis/storage.k8s.io/v1/storageclasses';
const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
const merge = { contentType: 'application/merge-patch+json' };
const isDefault = { 'storageclass.kubernetes.io/is-default-class': 'true' };

describe('API server stand-in: StorageClasses and claim growth', () => {
  let server: TestApiServer;
  let dir: string;

  const post = async (path: string, body: Record<string, unknown>) => {
    const answer = await kubeJson(server, 'POST', path, { body });
    assert.equal(answer.status, 201, answer.text);
    return answer.body;
  };
  const newClaim = (name: string, extra: { annotations?: Record<string, string>; storageClassName?: string } = {}) =>
    post(claims, {
      metadata: { name, annotations: extra.annotations },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: extra.storageClassName },
    });
  const bind = async (name: string) => {
    const answer = await kubeJson(server, 'PATCH', `${claims}/${name}/status`, { body: { status: { phase: 'Bound' } }, ...merge });
    assert.equal(answer.status, 200, answer.text);
  };
  const grow = (name: string, storage: string, subresource = '') =>
    kubeJson(server, 'PATCH', `${claims}/${name}${subresource}`, { body: { spec: { resources: { requests: { storage } } } }, ...merge });

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-sc-'));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives a new claim the newest of several default classes, and none when it names a class by annotation', async () => {
    await post(classes, { metadata: { name: 'older', annotations: isDefault }, provisioner: 'example.com/a' });
    await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has whole seconds
    await post(classes, {
      metadata: { name: 'newer', annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/a',
      allowVolumeExpansion: true,
    });
    assert.equal(((await newClaim('picks-newest')).spec as { storageClassName: string }).storageClassName, 'newer');
    const annotated = await newClaim('by-annotation', { annotations: { 'volume.beta.kubernetes.io/storage-class': 'older' } });
    assert.equal((annotated.spec as { storageClassName?: string }).storageClassName, undefined);
    const malformed = await kubeJson(server, 'POST', claims, { body: { metadata: { name: 'malformed' }, spec: 'fast' } });
    assert.equal(malformed.status, 400, `a spec that is no object is a decoding error, default class or not: ${malformed.text}`);
  });

  it('refuses growth once the class is gone or when the claim names its class only by annotation', async () => {
    await bind('by-annotation');
    const byAnnotation = await grow('by-annotation', '2Gi');
    assert.equal(byAnnotation.status, 403, 'the annotated class "older" does not allow expansion');
    await bind('picks-newest');
    assert.equal((await grow('picks-newest', '2Gi')).status, 200);
    assert.equal((await kubeJson(server, 'DELETE', `${classes}/newer`)).status, 200);
    const orphaned = await grow('picks-newest', '3Gi');
    assert.equal(orphaned.status, 403, orphaned.text);
    assert.match(String(orphaned.body.message), /must support resize$/);
  });

  it('ignores spec changes sent to /status (so no resize check there) and keeps equal sizes writable', async () => {
    const viaStatus = await grow('picks-newest', '9Gi', '/status');
    assert.equal(viaStatus.status, 200, viaStatus.text);
    assert.equal((viaStatus.body.spec as { resources: { requests: { storage: string } } }).resources.requests.storage, '2Gi');
    const relabel = await kubeJson(server, 'PATCH', `${claims}/picks-newest`, {
      body: { metadata: { labels: { a: 'b' } }, spec: { resources: { requests: { storage: '2048Mi' } } } },
      ...merge,
    });
    assert.equal(relabel.status, 200, `the same quantity in other units is no growth: ${relabel.text}`);
  });

  it('lists classes in kubectl with their printer columns', async () => {
    const { stdout } = await promisify(execFile)('kubectl', ['--cache-dir', join(dir, 'cache'), 'get', 'sc'], {
      env: { ...process.env, KUBECONFIG: server.kubeconfigPath, HOME: dir },
    });
    assert.match(stdout, /NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE/);
    assert.match(stdout, /older \(default\)\s+example\.com\/a\s+Delete\s+Immediate\s+false\s/);
  });
});
