import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import { writeProjectedVolume } from '../../../local/node/projected-volumes.js';
import { podDirectory, projectedLocalizer, volumeHostPath } from '../../../local/node/volumes.js';
import { eventually, httpPodContainer, randomIpPrefix, readyPod, startNodeTestbed, type NodeTestbed } from './helpers.js';

describe('projected volume files', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-projected-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes changed keys only, removes keys that left, and honours items and modes', async () => {
    const target = join(dir, 'volume');
    assert.equal(await writeProjectedVolume(target, { a: 'one', b: 'two' }, { defaultMode: 0o600 }), 2);
    assert.equal(readFileSync(join(target, 'a'), 'utf8'), 'one');
    assert.equal(statSync(join(target, 'b')).mode & 0o777, 0o600);
    assert.equal(await writeProjectedVolume(target, { a: 'one', b: 'two' }, { defaultMode: 0o600 }), 0, 'unchanged data writes nothing');
    assert.equal(await writeProjectedVolume(target, { a: 'uno' }, { defaultMode: 0o600 }), 2, 'one rewritten, one removed');
    assert.equal(readFileSync(join(target, 'a'), 'utf8'), 'uno');
    assert.equal(existsSync(join(target, 'b')), false);
    assert.deepEqual(
      readdirSync(target).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );

    const listed = join(dir, 'listed');
    await writeProjectedVolume(
      listed,
      { a: 'one', b: 'two' },
      {
        items: [
          { key: 'b', path: 'sub/bee', mode: 0o640 },
          { key: 'missing', path: 'x' },
        ],
      },
    );
    assert.equal(readFileSync(join(listed, 'sub', 'bee'), 'utf8'), 'two');
    assert.equal(statSync(join(listed, 'sub', 'bee')).mode & 0o777, 0o640);
    assert.equal(existsSync(join(listed, 'a')), false);
    assert.equal(existsSync(join(listed, 'x')), false);
    await writeProjectedVolume(listed, { a: 'one', b: 'two' }, { items: [{ key: 'b', path: '../escape' }] });
    assert.equal(existsSync(join(dir, 'escape')), false, 'a path leaving the volume is never written');
  });

  it('a configMap file naming a mounted folder gets the host folder (pods here are host processes); a secret stays as it is', async () => {
    const pod: k8s.V1Pod = {
      metadata: { name: 'db-0', namespace: 'shop', uid: 'u-2' },
      spec: {
        containers: [
          {
            name: 'ha',
            image: 'x',
            volumeMounts: [
              { name: 'repo', mountPath: '/var/lib/keelson-backup' },
              { name: 'settings', mountPath: '/etc/keelson' },
            ],
          },
        ],
        volumes: [
          { name: 'repo', emptyDir: {} },
          { name: 'settings', configMap: { name: 'db-config' } },
        ],
      },
    };
    const repoHost = volumeHostPath(dir, pod, pod.spec!.volumes![0]!);
    const settings = '{"backup":{"repository":{"path":"/var/lib/keelson-backup/local"}},"other":"/var/lib/keelson-backups"}';
    const target = join(dir, 'settings');
    await writeProjectedVolume(target, { 'settings.json': settings }, {}, undefined, projectedLocalizer(dir, pod, 'configMap'));
    assert.equal(
      readFileSync(join(target, 'settings.json'), 'utf8'),
      `{"backup":{"repository":{"path":"${repoHost}/local"}},"other":"/var/lib/keelson-backups"}`,
    );
    await writeProjectedVolume(join(dir, 'secret'), { key: settings }, {}, undefined, projectedLocalizer(dir, pod, 'secret'));
    assert.equal(readFileSync(join(dir, 'secret', 'key'), 'utf8'), settings);
  });
});

/**
 * A running pod sees a changed Secret or ConfigMap in its volume without a restart, as on a
 * kubelet; a volume mounted only through subPath keeps its first content.
 */
describe('local node: Secret and ConfigMap volumes follow their objects', { timeout: 120_000 }, () => {
  const ns = 'projected';
  let dir: string;
  let bed: NodeTestbed;
  let pod: k8s.V1Pod;

  const fileOf = (volume: string, key: string): string => readFileSync(join(podDirectory(join(dir, 'node'), pod), 'volumes', volume, key), 'utf8');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-projected-pod-'));
    bed = await startNodeTestbed({ dir, ns, ipPrefix: randomIpPrefix(), name: 'projected' });
    await bed.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'creds' }, stringData: { 'ca.crt': 'first CA', 'old.key': 'gone soon' } },
    });
    await bed.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'settings' }, data: { 'app.conf': 'v1' } } });
    await bed.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'pinned' }, data: { 'pinned.conf': 'v1' } } });
    const web = httpPodContainer([], {
      volumeMounts: [
        { name: 'creds', mountPath: '/etc/creds', readOnly: true },
        { name: 'settings', mountPath: '/etc/settings' },
        { name: 'pinned', mountPath: '/etc/pinned.conf', subPath: 'pinned.conf' },
      ],
    });
    await bed.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web', namespace: ns },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [web],
          volumes: [
            { name: 'creds', secret: { secretName: 'creds', defaultMode: 0o640 } },
            { name: 'settings', configMap: { name: 'settings' } },
            { name: 'pinned', configMap: { name: 'pinned' } },
          ],
        },
      },
    });
    pod = await readyPod(bed.core, ns, 'web', 'web ready');
  });
  after(async () => {
    await bed?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('rewrites a changed Secret in the running pod and drops a key that left it', async () => {
    assert.equal(fileOf('creds', 'ca.crt'), 'first CA');
    await bed.core.replaceNamespacedSecret({
      name: 'creds',
      namespace: ns,
      body: { metadata: { name: 'creds', namespace: ns }, stringData: { 'ca.crt': 'second CA' } },
    });
    await eventually(() => fileOf('creds', 'ca.crt') === 'second CA', 'the new CA reaches the volume', 15_000);
    assert.throws(() => fileOf('creds', 'old.key'), /ENOENT/);
  });

  it('rewrites a ConfigMap mounted whole, never one mounted by subPath', async () => {
    await bed.core.replaceNamespacedConfigMap({
      name: 'settings',
      namespace: ns,
      body: { metadata: { name: 'settings', namespace: ns }, data: { 'app.conf': 'v2' } },
    });
    await bed.core.replaceNamespacedConfigMap({
      name: 'pinned',
      namespace: ns,
      body: { metadata: { name: 'pinned', namespace: ns }, data: { 'pinned.conf': 'v2' } },
    });
    await eventually(() => fileOf('settings', 'app.conf') === 'v2', 'the whole-mounted ConfigMap follows', 15_000);
    // The same watch delivered both changes; give the second one time it would need too.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(fileOf('pinned', 'pinned.conf'), 'v1');
  });
});
