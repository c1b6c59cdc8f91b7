// Claim volumes (tmpfs, as root) a node left mounted because it was killed hard (SIGKILL) before
// its shutdown: the node's next start with the same folder, and `keelson local down`, save their
// files to the store and unmount them, so a killed run does not keep their RAM.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import { runLocalDown } from '../../../local/cluster/up.js';
import { claimMountsUnder, mountTable } from '../../../local/node/claim-filesystems.js';
import { claimDirectory } from '../../../local/node/volumes.js';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { eventually, randomIpPrefix, readyPod } from './helpers.js';

const ns = 'stale';
const isRoot = process.getuid?.() === 0;

describe('claim volumes left mounted by a killed node', { skip: !isRoot && 'claim volumes are mounted only as root', timeout: 180_000 }, () => {
  let dir: string;
  let server: TestApiServer;
  let core: k8s.CoreV1Api;
  let node: ChildProcess | undefined;
  let output = '';
  const nodeDir = (): string => join(dir, 'node');
  const volume = (): string => claimDirectory(nodeDir(), ns, 'kept');

  /** `keelson local node` in DIR/node, as `keelson local up` runs it. */
  function startNode(): ChildProcess {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bin/keelson.ts', 'local', 'node', '--kubeconfig', server.kubeconfigPath, '--dir', nodeDir(), '--ip-prefix', randomIpPrefix()].concat(
        ['--image-map', join(dir, 'images.yaml'), '--shutdown-grace', '1'],
      ),
      { cwd: process.cwd(), env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    node = child;
    return child;
  }

  async function killNode(): Promise<void> {
    if (!node || node.exitCode !== null || node.signalCode !== null) return;
    const exited = once(node, 'exit');
    node.kill('SIGKILL');
    await exited;
  }

  /** A pod holding claim `kept`, which writes `file` into it once. */
  async function runPod(file: string): Promise<void> {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'holder' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'sh',
              image: 'registry.test/shell:1',
              args: [`head -c 1048576 /dev/urandom > /data/${file} && exec sleep 600`],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
              readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
            },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'kept' } }],
        },
      },
    });
    await readyPod(core, ns, 'holder', 'pod holder ready', 60_000);
    await eventually(
      async () => ((await stat(join(volume(), file)).catch(() => undefined))?.size === 1024 * 1024 ? true : undefined),
      `${file} written`,
      30_000,
    );
  }

  const deletePodAsKubectlForce = () => core.deleteNamespacedPod({ name: 'holder', namespace: ns, gracePeriodSeconds: 0 });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keelson-stale-claims-'));
    await writeFile(join(dir, 'images.yaml'), YAML.stringify([{ repository: 'registry.test/shell', entrypoint: ['/bin/sh', '-c'] }]));
    server = await startTestApiServer();
    core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: { metadata: { name: 'kept' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } },
    });
  });

  after(async () => {
    await killNode();
    // Whatever happened above, no mount of this test may outlive it.
    for (const target of claimMountsUnder(nodeDir())) await new Promise((r) => spawn('umount', ['-l', target]).on('exit', r));
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("the node's next start unmounts the volume a SIGKILL left mounted, keeping its files", async () => {
    startNode();
    await runPod('before-kill');
    assert.deepEqual(claimMountsUnder(nodeDir()), [volume()]);
    await killNode();
    assert.deepEqual(claimMountsUnder(nodeDir()), [volume()], 'a node killed hard leaves its claim volume mounted');
    const written = await readFile(join(volume(), 'before-kill'));
    // The pod goes while no node runs: nothing on the next start mounts the claim again.
    await deletePodAsKubectlForce();

    startNode();
    await eventually(() => (claimMountsUnder(nodeDir()).length === 0 ? true : undefined), 'the stale claim volume unmounted', 60_000);
    // The start mounts and unmounts a probe under the node folder right after: wait for it to go too.
    await eventually(
      () => {
        const left = mountTable().filter((m) => m.mountPoint.startsWith(`${dir}/`));
        if (left.length > 0) throw new Error(`still mounted: ${left.map((m) => `${m.mountPoint} (${m.source})`).join(', ')}`);
        return true;
      },
      'nothing of this node stays mounted',
      30_000,
    );
    assert.deepEqual(await readFile(join(nodeDir(), 'volume-store', ns, 'kept', 'before-kill')), written, 'the files wait in the store');
    await eventually(() => (/unmounted claim volumes left mounted by a previous run/.test(output) ? true : undefined), 'the start says so', 10_000);

    // The claim's next mount brings them back.
    await eventually(
      () =>
        core.readNamespacedPod({ name: 'holder', namespace: ns }).then(
          () => undefined,
          () => true,
        ),
      'the old pod gone',
      30_000,
    );
    await runPod('after-restart');
    assert.deepEqual(await readFile(join(volume(), 'before-kill')), written);
  });

  test('keelson local down after the stack was killed unmounts what it left', async () => {
    assert.deepEqual(claimMountsUnder(nodeDir()), [volume()]);
    await killNode();
    const lines: string[] = [];
    await runLocalDown(dir, (line) => lines.push(line));
    assert.deepEqual(claimMountsUnder(nodeDir()), []);
    assert.match(lines.join('\n'), /^nothing running from .*; unmounted 1 claim volume\(s\) it left mounted/);
    assert.equal((await readFile(join(nodeDir(), 'volume-store', ns, 'kept', 'after-restart'))).length, 1024 * 1024);
  });
});
