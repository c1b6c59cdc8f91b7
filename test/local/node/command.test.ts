// `keelson local node` as a process: it runs pods against a stand-in API server (including the
// keelson image mapped to this repository's CLI), and stops its pods on SIGTERM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { eventually, getJson, httpPodContainer, randomIpPrefix, readyPod, refused, testImages } from './helpers.js';

const ns = 'cli';
let dir: string;
let server: TestApiServer;
let core: k8s.CoreV1Api;
let child: ChildProcess | undefined;
let output = '';

function runCli(args: string[]): ChildProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', 'local', 'node', ...args], {
    cwd: process.cwd(),
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return proc;
}

/** Starts `keelson local node` in DIR/FOLDER on its own /24 with the test images (killed in `after`). */
function startNode(folder: string, extra: string[] = []): { prefix: string; node: ChildProcess } {
  const prefix = randomIpPrefix();
  output = '';
  const node = runCli([
    '--kubeconfig',
    server.kubeconfigPath,
    '--dir',
    join(dir, folder),
    '--ip-prefix',
    prefix,
    '--image-map',
    join(dir, 'images.yaml'),
    ...extra,
  ]);
  child = node;
  return { prefix, node };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keelson-node-cli-'));
  await writeFile(join(dir, 'images.yaml'), YAML.stringify(testImages));
  server = await startTestApiServer();
  core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
});

after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

test('usage errors exit 2 and name the missing option', async () => {
  const proc = runCli(['--dir', dir]);
  const [code] = (await once(proc, 'exit')) as [number];
  assert.equal(code, 2);
  assert.match(output, /--kubeconfig/);
});

test('the CLI runs pods (the keelson image runs this CLI) and stops them on SIGTERM', async () => {
  const { prefix, node: cli } = startNode('node', ['--shutdown-grace', '5']);
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'version' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'keelson', image: 'ghcr.io/keelson/keelson:0.1.0', args: ['--version'] }] },
    },
  });
  await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'web' }, spec: { containers: [httpPodContainer()] } } });
  const done = await eventually(
    async () => {
      const pod = await core.readNamespacedPod({ name: 'version', namespace: ns });
      return pod.status?.phase === 'Succeeded' ? pod : undefined;
    },
    `keelson --version pod succeeded (cli output: ${output})`,
    40_000,
  );
  assert.equal(done.status?.containerStatuses?.[0].state?.terminated?.exitCode, 0);
  const logDir = join(dir, 'node', 'logs', `${ns}_version_${done.metadata?.uid}`);
  assert.match(await readFile(join(logDir, 'keelson.log'), 'utf8'), /^\d+\.\d+\.\d+/);

  const web = await readyPod(core, ns, 'web', 'web pod ready');
  const ip = web.status!.podIP!;
  assert.ok(ip.startsWith(`${prefix}.`));
  assert.equal((await getJson(`http://${ip}:8080/`)).body.pod, 'web');
  const node = await core.readNode({ name: 'keelson-local' });
  assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');

  cli.kill('SIGTERM');
  const [code] = (await once(cli, 'exit')) as [number];
  assert.equal(code, 0, output);
  assert.equal(await refused(`http://${ip}:8080/`), true);
});

test('pods do not outlive a node agent that is killed outright', async () => {
  const { node: cli } = startNode('node-killed');
  await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'orphan' }, spec: { containers: [httpPodContainer()] } } });
  const pod = await readyPod(core, ns, 'orphan', `orphan pod ready (cli output: ${output})`);
  const ip = pod.status!.podIP!;
  assert.equal((await getJson(`http://${ip}:8080/`)).body.pod, 'orphan');
  cli.kill('SIGKILL');
  await once(cli, 'exit');
  // The watchdog notices within about a second and kills the container processes.
  await eventually(() => refused(`http://${ip}:8080/`), 'orphaned pod process killed', 10_000, 250);
});
