// The local node's shutdown when one of its steps fails: the rest still runs. Claim volumes are
// saved and unmounted and the Service proxies stop listening, so a failed step can neither keep
// RAM taken nor keep the process alive; the failure is reported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { claimMountsUnder } from '../../../local/node/claim-filesystems.js';
import { eventually, randomIpPrefix, readyPod, startNodeTestbed, type NodeTestbed } from './helpers.js';

const run = promisify(execFile);
const ns = 'shutdown';
const isRoot = process.getuid?.() === 0;

/** Whether something accepts a TCP connection at host:port within a second. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const done = (value: boolean) => {
      socket.destroy();
      resolve(value);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

describe('local node shutdown with a failing step', { skip: !isRoot && 'claim volumes are mounted only as root', timeout: 120_000 }, () => {
  let dir: string;
  let bed: NodeTestbed;
  let busy: string | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keelson-node-shutdown-'));
    bed = await startNodeTestbed({
      dir,
      ns,
      ipPrefix: randomIpPrefix(),
      name: 'node-shutdown',
      images: [{ repository: 'registry.test/shell', entrypoint: ['/bin/sh', '-c'] }],
    });
  });

  after(async () => {
    if (busy) await run('umount', ['-l', busy]).catch(() => undefined);
    for (const target of claimMountsUnder(join(dir, 'node'))) await run('umount', ['-l', target]).catch(() => undefined);
    await bed?.node.close().catch(() => undefined);
    await bed?.server.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('unmounts the claim volumes and closes the Service proxies, then reports the step that failed', async () => {
    const { core } = bed;
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } },
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'holder', labels: { app: 'holder' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'sh',
              image: 'registry.test/shell:1',
              args: ['exec sleep 600'],
              ports: [{ containerPort: 8080 }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
              readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
            },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });
    const service = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'holder' }, spec: { selector: { app: 'holder' }, ports: [{ port: 8080, targetPort: 8080 }] } },
    });
    await readyPod(core, ns, 'holder', 'pod holder ready', 60_000);
    const nodeDir = join(dir, 'node');
    assert.equal(claimMountsUnder(nodeDir).length, 1, 'the claim is a mounted volume');
    const clusterIp = service.spec!.clusterIP!;
    await eventually(async () => ((await accepts(clusterIp, 8080)) ? true : undefined), 'the Service proxy listening', 30_000);

    // A mount inside the pod's folder: removing the folder fails (EBUSY), so the pod's cleanup step throws.
    const [podFolder] = await readdir(join(nodeDir, 'pods'));
    busy = join(nodeDir, 'pods', podFolder!, 'busy');
    await mkdir(busy);
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'keelson-test-busy', busy]);

    await assert.rejects(bed.node.close(), /node shutdown: 1 step\(s\) failed: .*(EBUSY|busy)/i);
    assert.deepEqual(claimMountsUnder(nodeDir), [], 'the claim volume is unmounted all the same');
    assert.equal(await accepts(clusterIp, 8080), false, 'the Service proxy no longer listens');
  });
});
