// End to end against the API server stand-in: a StatefulSet of 3 pods running the fixture HTTP
// server, readiness gating Endpoints, the service proxy switching backends, a liveness failure
// restarting a container, and pod deletion honouring the grace period.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { mergePatch } from '../../../local/controllers/kube.js';
import { localStorageClass } from '../../../local/controllers/storage-class.js';
import { openWatch, kubeConfigAs } from '../../support/kube.js';
import {
  eventually,
  getJson,
  httpPodContainer,
  isReady,
  post,
  randomIpPrefix,
  readyPod,
  refused,
  startNodeTestbed,
  statefulSetOf,
  type NodeTestbed,
} from './helpers.js';

const ns = 'shop';
const prefix = randomIpPrefix();
const clusterIP = `${prefix}.200`;
let dir: string;
let bed: NodeTestbed;
let server: NodeTestbed['server'];
let node: NodeTestbed['node'];
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let podWatch: Awaited<ReturnType<typeof openWatch>>;
let signalLog: string;

async function readPod(name: string): Promise<k8s.V1Pod | undefined> {
  try {
    return await core.readNamespacedPod({ name, namespace: ns });
  } catch {
    return undefined;
  }
}

async function endpointIps(): Promise<{ ready: string[]; notReady: string[] }> {
  const ep = await core.readNamespacedEndpoints({ name: 'web', namespace: ns });
  const subsets = ep.subsets ?? [];
  return {
    ready: subsets.flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort(),
    notReady: subsets.flatMap((s) => (s.notReadyAddresses ?? []).map((a) => a.ip)).sort(),
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keelson-node-sts-'));
  signalLog = join(dir, 'signals.log');
  bed = await startNodeTestbed({ dir, ns, ipPrefix: prefix, name: 'local-node-test', backoff: { initialMs: 500, maxMs: 2000 } });
  ({ server, node, core, apps } = bed);
  podWatch = await openWatch(server, `/api/v1/namespaces/${ns}/pods?watch=true`);
  await core.createNamespacedService({
    namespace: ns,
    body: { metadata: { name: 'web-headless' }, spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ name: 'http', port: 8080 }] } },
  });
  await core.createNamespacedService({
    namespace: ns,
    body: { metadata: { name: 'web' }, spec: { clusterIP, selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
  });
  await apps.createNamespacedStatefulSet({
    namespace: ns,
    body: statefulSetOf('web', {
      replicas: 3,
      serviceName: 'web-headless',
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 3,
          containers: [
            httpPodContainer(
              [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'DATA_DIR', value: '/data' },
                { name: 'SIGNAL_LOG', value: signalLog },
                { name: 'TERM_DELAY_MS', value: '1000' },
              ],
              {
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
                startupProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 30 },
                readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
                // Two failures in a row, 2 s timeout: a slow moment on a busy machine is not a restart.
                livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, timeoutSeconds: 2, failureThreshold: 2 },
              },
            ),
          ],
        },
      },
    }),
  });
});

after(async () => {
  podWatch?.stop();
  await bed?.close();
  await rm(dir, { recursive: true, force: true });
});

test('the StatefulSet creates its pods in order, each on its own address with a bound claim', async () => {
  await eventually(
    async () => (await apps.readNamespacedStatefulSet({ name: 'web', namespace: ns })).status?.readyReplicas === 3,
    'three ready replicas',
    45_000,
  );
  const pods = await Promise.all(['web-0', 'web-1', 'web-2'].map(async (name) => (await readPod(name))!));
  const ips = pods.map((p) => p.status?.podIP ?? '');
  assert.equal(new Set(ips).size, 3);
  for (const [i, pod] of pods.entries()) {
    assert.ok(ips[i].startsWith(`${prefix}.`), `pod IP ${ips[i]} is in the node block`);
    assert.equal(pod.spec?.nodeName, 'keelson-local');
    assert.equal(pod.spec?.hostname, `web-${i}`);
    const { body } = await getJson(`http://${ips[i]}:8080/`);
    assert.equal(body.pod, `web-${i}`);
    assert.equal(body.namespace, ns);
    assert.equal((body.env as Record<string, string>).DATA_DIR, join(dir, 'node', 'volumes', ns, `data-web-${i}`));
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: `data-web-${i}`, namespace: ns });
    assert.equal(claim.status?.phase, 'Bound');
    assert.equal(claim.spec?.storageClassName, localStorageClass.metadata?.name, "the node's default class was filled in");
  }
  // The local class allows expansion, so a bound claim can grow as on a cluster that supports it.
  const grown = await core.patchNamespacedPersistentVolumeClaim(
    { name: 'data-web-0', namespace: ns, body: { spec: { resources: { requests: { storage: '2Gi' } } } } },
    mergePatch,
  );
  assert.equal(grown.spec?.resources?.requests?.storage, '2Gi');
  // Ordered creation: each pod was ADDED only after the previous one had been seen Ready.
  const events = podWatch.events.map((e) => ({ type: e.type, pod: e.object as unknown as k8s.V1Pod }));
  for (const ordinal of [1, 2]) {
    const added = events.findIndex((e) => e.type === 'ADDED' && e.pod.metadata?.name === `web-${ordinal}`);
    const previousReady = events.findIndex((e) => e.pod.metadata?.name === `web-${ordinal - 1}` && isReady(e.pod));
    assert.ok(added > 0 && previousReady >= 0 && previousReady < added, `web-${ordinal} was created after web-${ordinal - 1} became ready`);
  }
  const status = (await apps.readNamespacedStatefulSet({ name: 'web', namespace: ns })).status;
  assert.equal(status?.replicas, 3);
  assert.equal(status?.updatedReplicas, 3);
  assert.ok(status?.updateRevision?.startsWith('web-'));
});

test('readiness gates Endpoints', async () => {
  const pod = (await readPod('web-1'))!;
  const ip = pod.status!.podIP!;
  await eventually(async () => (await endpointIps()).ready.length === 3, 'three ready endpoints');
  await post(`http://${ip}:8080/unready`);
  await eventually(async () => {
    const eps = await endpointIps();
    return eps.ready.length === 2 && !eps.ready.includes(ip) && eps.notReady.includes(ip);
  }, 'web-1 moved to notReadyAddresses');
  assert.equal(isReady(await readPod('web-1')), false);
  await post(`http://${ip}:8080/ready`);
  await eventually(async () => (await endpointIps()).ready.includes(ip), 'web-1 ready again');
});

/** One HTTP/1.1 keep-alive exchange on a raw socket; returns the pod name that answered. */
async function ask(socket: Socket): Promise<string> {
  const body = new Promise<string>((resolve, reject) => {
    let data = '';
    const onData = (chunk: Buffer): void => {
      data += chunk.toString();
      const end = data.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(data);
      if (end >= 0 && length && data.length >= end + 4 + Number(length[1])) {
        socket.off('data', onData);
        resolve(data.slice(end + 4, end + 4 + Number(length[1])));
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('connection closed')));
  });
  socket.write('GET / HTTP/1.1\r\nHost: web\r\nConnection: keep-alive\r\n\r\n');
  return (JSON.parse(await body) as { pod: string }).pod;
}

test('the service proxy forwards to ready endpoints and drops connections to removed ones', async () => {
  await eventually(() => node.proxy.snapshot()[`${clusterIP}:80`]?.length === 3, 'proxy has three backends');
  const seen = new Set<string>();
  for (let i = 0; i < 6; i += 1) {
    const socket = connect({ host: clusterIP, port: 80 });
    await once(socket, 'connect');
    seen.add(await ask(socket));
    socket.destroy();
  }
  assert.deepEqual([...seen].sort(), ['web-0', 'web-1', 'web-2']);

  const socket = connect({ host: clusterIP, port: 80 });
  await once(socket, 'connect');
  const first = await ask(socket);
  const closed = once(socket, 'close');
  const target = (await readPod(first))!;
  await post(`http://${target.status!.podIP}:8080/unready`);
  await closed; // the proxy closed the connection to the endpoint that left
  await eventually(() => node.proxy.snapshot()[`${clusterIP}:80`]?.length === 2, 'proxy down to two backends');
  for (let i = 0; i < 4; i += 1) {
    const next = connect({ host: clusterIP, port: 80 });
    await once(next, 'connect');
    assert.notEqual(await ask(next), first);
    next.destroy();
  }
  await post(`http://${target.status!.podIP}:8080/ready`);
  await eventually(() => node.proxy.snapshot()[`${clusterIP}:80`]?.length === 3, 'proxy back to three backends');
});

test('a liveness failure restarts the container and the restart is counted', async () => {
  const pod = (await readPod('web-2'))!;
  const ip = pod.status!.podIP!;
  const restartsBefore = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
  const pidBefore = (await getJson(`http://${ip}:8080/`)).body.pid;
  await post(`http://${ip}:8080/fail-liveness`);
  const restarted = await eventually(async () => {
    const current = await readPod('web-2');
    return (current?.status?.containerStatuses?.[0]?.restartCount ?? 0) > restartsBefore && isReady(current) ? current : undefined;
  }, 'web-2 restarted and ready');
  assert.equal(restarted.metadata?.uid, pod.metadata?.uid, 'the container restarted, not the pod');
  assert.equal(restarted.status?.podIP, ip);
  assert.ok(restarted.status?.containerStatuses?.[0].lastState?.terminated, 'lastState records the killed container');
  assert.notEqual((await getJson(`http://${ip}:8080/`)).body.pid, pidBefore);
});

test('deleting a pod runs SIGTERM with its grace period, then the StatefulSet recreates it', async () => {
  const pod = (await readPod('web-1'))!;
  const ip = pod.status!.podIP!;
  await core.deleteNamespacedPod({ name: 'web-1', namespace: ns });
  const terminating = await readPod('web-1');
  assert.ok(terminating?.metadata?.deletionTimestamp, 'the pod is terminating, not gone');
  assert.equal(terminating?.metadata?.deletionGracePeriodSeconds, 3);
  await eventually(async () => (await readFile(signalLog, 'utf8').catch(() => '')).includes('SIGTERM web-1'), 'web-1 got SIGTERM');
  // The process exits 1 s after SIGTERM: until then it still serves.
  assert.equal((await getJson(`http://${ip}:8080/`)).status, 200);
  const replaced = await eventually(
    async () => {
      const current = await readPod('web-1');
      return current && current.metadata?.uid !== pod.metadata?.uid && isReady(current) ? current : undefined;
    },
    'web-1 recreated and ready',
    30_000,
  );
  assert.equal(replaced.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName, 'data-web-1');
  // The old object went away only after the kubelet side finished: a DELETED event for the old uid.
  assert.ok(podWatch.events.some((e) => e.type === 'DELETED' && (e.object as { metadata?: { uid?: string } }).metadata?.uid === pod.metadata?.uid));
});

test('a container that ignores SIGTERM is killed when the grace period ends', async () => {
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'stubborn' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          httpPodContainer([
            { name: 'POD_NAME', value: 'stubborn' },
            { name: 'IGNORE_TERM', value: '1' },
            { name: 'SIGNAL_LOG', value: signalLog },
          ]),
        ],
      },
    },
  });
  const running = await readyPod(core, ns, 'stubborn', 'stubborn ready');
  const ip = running.status!.podIP!;
  const started = Date.now();
  await core.deleteNamespacedPod({ name: 'stubborn', namespace: ns });
  await eventually(async () => (await readFile(signalLog, 'utf8')).includes('SIGTERM stubborn'), 'stubborn got SIGTERM');
  assert.equal((await getJson(`http://${ip}:8080/`)).status, 200, 'still alive after SIGTERM');
  await eventually(async () => (await readPod('stubborn')) === undefined, 'stubborn deleted');
  assert.ok(Date.now() - started >= 900, 'the object stayed until the grace period ended');
  assert.equal(await refused(`http://${ip}:8080/`), true);
});

test('a pod deleted and recreated while the node was cut off is replaced, not left running', async () => {
  // The test acts under its own identity so that only the node's token is refused.
  const testCore = kubeConfigAs(server, 'relist-test-client', join(dir, 'test-client.kubeconfig')).makeApiClient(k8s.CoreV1Api);
  const podBody = (): k8s.V1Pod => ({
    metadata: { name: 'phoenix' },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [httpPodContainer([{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } }])],
    },
  });
  await testCore.createNamespacedPod({ namespace: ns, body: podBody() });
  const first = await readyPod(core, ns, 'phoenix', 'phoenix ready');
  const oldIp = first.status!.podIP!;
  const undo = server.faults.refuse({ token: server.token });
  try {
    await testCore.deleteNamespacedPod({ name: 'phoenix', namespace: ns, gracePeriodSeconds: 0 });
    await testCore.createNamespacedPod({ namespace: ns, body: podBody() });
    server.faults.compactHistory(); // the node's watch cannot resume: it must relist
  } finally {
    undo();
  }
  const second = await readyPod(core, ns, 'phoenix', 'new phoenix ready', 30_000, (pod) => pod.metadata?.uid !== first.metadata?.uid);
  assert.equal((await getJson(`http://${second.status!.podIP}:8080/`)).body.pod, second.metadata?.uid);
  if (oldIp !== second.status!.podIP) {
    await eventually(() => refused(`http://${oldIp}:8080/`), 'old phoenix process stopped', 15_000, 250);
  } else {
    assert.equal((await getJson(`http://${oldIp}:8080/`)).body.pod, second.metadata?.uid, 'only the new pod answers on the address');
  }
});
