// Claims with a real capacity on the stand-in (as root): a pod's `df` shows the claimed size, a
// write past it fails with ENOSPC, growing the claim grows the mounted volume online (full or not)
// with the status a real cluster shows, and no mount outlives the claim or the node.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { mergePatch } from '../../../local/controllers/kube.js';
import { claimMountsUnder } from '../../../local/node/claim-filesystems.js';
import { claimDirectory } from '../../../local/node/volumes.js';
import { openWatch } from '../../support/kube.js';
import { eventually, randomIpPrefix, readyPod, startNodeTestbed, type NodeTestbed } from './helpers.js';

const ns = 'disks';
const mi = 1024 * 1024;
const isRoot = process.getuid?.() === 0;

describe('claims with a real capacity', { skip: !isRoot && 'mounting a filesystem per claim needs root', timeout: 120_000 }, () => {
  let dir: string;
  let bed: NodeTestbed;
  let core: k8s.CoreV1Api;
  const nodeDir = (): string => join(dir, 'node');

  const claim = (name: string, storage: string): k8s.V1PersistentVolumeClaim => ({
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
  });
  // `df` inside the pod: its /data argument is the mount path, mapped to the claim's volume.
  const dfPod = (name: string, claimName: string): k8s.V1Pod => ({
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'sh',
          image: 'registry.test/shell:1',
          args: ['df -B1 /data > /data/df.txt && exec sleep 600'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keelson-claim-capacity-'));
    bed = await startNodeTestbed({
      dir,
      ns,
      ipPrefix: randomIpPrefix(),
      name: 'claim-capacity-test',
      images: [{ repository: 'registry.test/shell', entrypoint: ['/bin/sh', '-c'] }],
    });
    core = bed.core;
    assert.equal(bed.node.agent.volumeMode, 'filesystem');
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('data', '64Mi') });
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('scratch', '64Mi') });
    await core.createNamespacedPod({ namespace: ns, body: dfPod('disk', 'data') });
    await core.createNamespacedPod({ namespace: ns, body: dfPod('scratch', 'scratch') });
    await readyPod(core, ns, 'disk', 'pod disk ready');
    await readyPod(core, ns, 'scratch', 'pod scratch ready');
  });

  after(async () => {
    await bed?.close();
    if (dir) {
      assert.deepEqual(claimMountsUnder(nodeDir()), [], 'no claim volume stays mounted after the node closes');
      // The files are kept for the claim's next mount (a node restart keeps a PersistentVolume's data).
      assert.equal((await stat(join(nodeDir(), 'volume-store', ns, 'data', 'after-growth'))).size, 16 * mi);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the claim is Bound with its size, and df inside the pod shows that size', async () => {
    const bound = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns });
    assert.equal(bound.status?.phase, 'Bound');
    assert.equal(bound.status?.capacity?.storage, '64Mi');
    const volume = claimDirectory(nodeDir(), ns, 'data');
    const df = await eventually(async () => (await readFile(join(volume, 'df.txt'), 'utf8').catch(() => '')) || undefined, 'df output');
    const size = Number(df.trim().split('\n')[1]?.trim().split(/\s+/)[1]);
    assert.equal(size, 64 * mi, df);
  });

  test('a write past the claimed size fails with ENOSPC; growing the claim grows the full volume online', async () => {
    const volume = claimDirectory(nodeDir(), ns, 'data');
    const chunk = Buffer.alloc(mi, 1);
    let written = 0;
    let failure: NodeJS.ErrnoException | undefined;
    for (let i = 0; i < 80 && !failure; i++) {
      await writeFile(join(volume, `fill-${i}`), chunk).then(
        () => (written += mi),
        (err: NodeJS.ErrnoException) => (failure = err),
      );
    }
    assert.equal(failure?.code, 'ENOSPC', 'the 64Mi volume fills up');
    assert.ok(written >= 60 * mi && written < 64 * mi, `${written} bytes fit`);

    const watch = await openWatch(bed.server, `/api/v1/namespaces/${ns}/persistentvolumeclaims?watch=true&fieldSelector=metadata.name%3Ddata`);
    await core.patchNamespacedPersistentVolumeClaim(
      { name: 'data', namespace: ns, body: { spec: { resources: { requests: { storage: '96Mi' } } } } },
      mergePatch,
    );
    const grown = await eventually(async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns });
      return c.status?.capacity?.storage === '96Mi' ? c : undefined;
    }, 'capacity 96Mi');
    assert.equal(grown.status?.conditions, undefined, 'no resize condition is left');
    assert.equal(grown.status?.allocatedResources?.storage, '96Mi');
    assert.equal(grown.status?.allocatedResourceStatuses, undefined);
    const statuses = watch.events.map((e) => (e.object as k8s.V1PersistentVolumeClaim).status ?? {});
    assert.ok(
      statuses.some((s) => s.conditions?.some((c) => c.type === 'FileSystemResizePending') && s.allocatedResourceStatuses?.storage === 'NodeResizeInProgress'),
      'the resize went through FileSystemResizePending/NodeResizeInProgress',
    );

    const fs = statfsSync(volume);
    assert.equal(fs.blocks * fs.bsize, 96 * mi);
    await writeFile(join(volume, 'after-growth'), Buffer.alloc(16 * mi, 2));
    assert.equal((await stat(join(volume, 'fill-0'))).size, mi, 'what was written before the growth is still there');
  });

  test('shrinking a claim is refused by the API server', async () => {
    await assert.rejects(
      core.patchNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns, body: { spec: { resources: { requests: { storage: '32Mi' } } } } }, mergePatch),
      (err: Error) => /can not be less than previous value/.test(err.message),
    );
  });

  test('a deleted claim loses its volume once no pod uses it', async () => {
    const scratch = claimDirectory(nodeDir(), ns, 'scratch');
    assert.ok(claimMountsUnder(nodeDir()).includes(scratch));
    await core.deleteNamespacedPod({ name: 'scratch', namespace: ns, gracePeriodSeconds: 0 });
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'scratch', namespace: ns });
    await eventually(() => !claimMountsUnder(nodeDir()).includes(scratch) || undefined, 'scratch volume released', 30_000);
    assert.ok(claimMountsUnder(nodeDir()).includes(claimDirectory(nodeDir(), ns, 'data')), 'the claim in use stays');
  });
});
