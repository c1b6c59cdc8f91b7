// A PodWorker with real processes but no API server: probes, liveness restarts, non-root
// accounts, claim folders and the grace period on termination.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { AddressPool } from '../../../local/node/addresses.js';
import { PodWorker } from '../../../local/node/pod-worker.js';
import { lookupUser } from '../../../local/node/run.js';
import { createLogger } from '../../../lib/log.js';
import { eventually, getJson, post, randomIpPrefix, refused, testImages } from './helpers.js';

let dir: string;
const workers: PodWorker[] = [];
const logger = createLogger({ name: 'pod-worker-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const addresses = new AddressPool(randomIpPrefix());

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keelson-pod-worker-'));
});

after(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await rm(dir, { recursive: true, force: true });
});

function makeWorker(pod: V1Pod, overrides: Partial<ConstructorParameters<typeof PodWorker>[1]> = {}): { worker: PodWorker; status: () => V1PodStatus } {
  const worker = new PodWorker(pod, {
    nodeDir: dir,
    nodeName: 'test-node',
    hostIP: '127.0.0.1',
    addresses,
    images: testImages,
    sources: { secret: async () => ({ token: 'abc' }), configMap: async () => undefined },
    baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    nonRootUser: lookupUser('postgres'),
    backoff: { initialMs: 200, maxMs: 1000, resetAfterMs: 60_000 },
    markerPrefix: 'pod-worker-test/',
    logger,
    ensureClaim: async () => undefined,
    kubeconfigFor: async () => undefined,
    onStatus: () => undefined,
    onEvent: () => undefined,
    ...overrides,
  });
  workers.push(worker);
  return { worker, status: () => worker.status() };
}

function httpPod(name: string, env: Array<{ name: string; value: string }> = [], extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, namespace: 'test', uid: `uid-${name}` },
    spec: {
      terminationGracePeriodSeconds: 2,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-${name}` } }],
      containers: [
        {
          name: 'web',
          image: 'registry.test/http-pod:1',
          args: ['--data=/var/lib/data/x'],
          ports: [{ name: 'http', containerPort: 8080 }],
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/data' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'DATA_DIR', value: '/var/lib/data' },
            { name: 'SECRET_VALUE', valueFrom: { secretKeyRef: { name: 'any', key: 'token' } } },
            ...env,
          ],
          // The startup probe holds liveness back until the server listens, as on a real kubelet.
          startupProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 30 },
          readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
          livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1, timeoutSeconds: 2, failureThreshold: 2 },
        },
      ],
      ...extra,
    },
  };
}

const ready = (s: V1PodStatus): boolean => s.phase === 'Running' && s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

test('a pod whose sandbox setup fails is set up again with a growing delay, its address given back each time', async () => {
  let refusals = 2;
  const events: string[] = [];
  const sizeBefore = addresses.size;
  const { worker, status } = makeWorker(httpPod('retried'), {
    kubeconfigFor: async () => {
      if (refusals-- > 0) throw new Error('TokenRequest refused');
      return undefined;
    },
    onEvent: (_pod, type, reason, message) => events.push(`${type} ${reason} ${message}`),
  });
  const started = Date.now();
  worker.start();
  await eventually(() => (status().message ?? '').includes('attempt 1') || undefined, 'the first failure reported in status');
  assert.equal(addresses.size, sizeBefore, 'the failed attempt gave its address back');
  await eventually(() => ready(status()), 'pod ready after two failed sandbox attempts', 30_000);
  assert.ok(Date.now() - started >= 3000, 'waited 1 s, then 2 s');
  assert.deepEqual(
    events.filter((e) => e.includes('FailedCreatePodSandBox')).map((e) => e.split(':')[0]),
    ['Warning FailedCreatePodSandBox Failed to create pod sandbox', 'Warning FailedCreatePodSandBox Failed to create pod sandbox'],
  );
  assert.equal(status().message, undefined);
  assert.equal(addresses.size, sizeBefore + 1, 'one address held by the running pod');
  await worker.terminate(2000);
});

test('a pod runs on its own loopback address with env, mounts and readiness', async () => {
  const { worker, status } = makeWorker(httpPod('alpha'));
  worker.start();
  await eventually(() => ready(status()), 'pod alpha ready');
  const ip = worker.podIP!;
  assert.ok(addresses.contains(ip));
  const { body } = await getJson(`http://${ip}:8080/`);
  assert.equal(body.pod, 'alpha');
  assert.equal(body.ip, ip);
  const env = body.env as Record<string, string>;
  const claimDir = join(dir, 'volumes', 'test', 'data-alpha');
  assert.equal(env.DATA_DIR, claimDir);
  assert.equal(env.SECRET_VALUE, 'abc');
  assert.deepEqual(JSON.parse(env.KEELSON_LOCAL_MOUNTS), { '/var/lib/data': claimDir });
  assert.deepEqual(body.argv, [`--data=${claimDir}/x`]);
  assert.ok((await stat(claimDir)).isDirectory());
  const s = status();
  assert.equal(s.podIP, ip);
  assert.equal(s.containerStatuses?.[0].ready, true);
  assert.equal(s.containerStatuses?.[0].restartCount, 0);
  assert.ok(s.containerStatuses?.[0].state?.running);
  // Readiness failure makes the pod unready without a restart.
  await post(`http://${ip}:8080/unready`);
  await eventually(() => !ready(status()), 'pod alpha unready');
  assert.equal(status().containerStatuses?.[0].restartCount, 0);
  await post(`http://${ip}:8080/ready`);
  await eventually(() => ready(status()), 'pod alpha ready again');
  const log = await readFile(join(worker.logDirectory, 'web.log'), 'utf8');
  assert.match(log, new RegExp(`listening on ${ip.replace(/\./g, '\\.')}:8080`));
});

test('a liveness failure restarts the container and counts the restart', async () => {
  const { worker, status } = makeWorker(httpPod('bravo'));
  worker.start();
  await eventually(() => ready(status()), 'pod bravo ready');
  const ip = worker.podIP!;
  const before = (await getJson(`http://${ip}:8080/`)).body.pid;
  const restartsBefore = status().containerStatuses?.[0].restartCount ?? 0;
  await post(`http://${ip}:8080/fail-liveness`);
  await eventually(() => (status().containerStatuses?.[0].restartCount ?? 0) > restartsBefore && ready(status()), 'restart after liveness failure');
  const afterPid = (await getJson(`http://${ip}:8080/`)).body.pid;
  assert.notEqual(afterPid, before);
  const last = status().containerStatuses?.[0].lastState?.terminated;
  assert.ok(last, 'lastState.terminated is recorded');
});

test('containers asking for a non-root user run as the local postgres account', async () => {
  const user = lookupUser('postgres');
  assert.ok(user, 'this machine has a postgres account');
  const { worker, status } = makeWorker(httpPod('charlie', [], { securityContext: { runAsNonRoot: true, runAsUser: 999 } }));
  worker.start();
  await eventually(() => ready(status()), 'pod charlie ready');
  const { body } = await getJson(`http://${worker.podIP}:8080/`);
  assert.equal(body.uid, user.uid);
  assert.equal((await stat(join(dir, 'volumes', 'test', 'data-charlie'))).uid, user.uid);
});

test('termination sends SIGTERM and SIGKILLs only after the grace period', async () => {
  const signalLog = join(dir, 'signals.log');
  const { worker, status } = makeWorker(
    httpPod('delta', [
      { name: 'IGNORE_TERM', value: '1' },
      { name: 'SIGNAL_LOG', value: signalLog },
    ]),
  );
  worker.start();
  await eventually(() => ready(status()), 'pod delta ready');
  const ip = worker.podIP!;
  const started = Date.now();
  const done = worker.terminate(1500);
  await eventually(async () => (await readFile(signalLog, 'utf8').catch(() => '')).includes('SIGTERM delta'), 'SIGTERM delivered');
  // Still serving during the grace period although it got SIGTERM.
  assert.equal((await getJson(`http://${ip}:8080/`)).status, 200);
  await done;
  assert.ok(Date.now() - started >= 1400, 'SIGKILL came no earlier than the grace period');
  assert.equal(await refused(`http://${ip}:8080/`), true);
  assert.equal(addresses.isUsed(ip), false);
});

function shellPod(name: string, restartPolicy: string, init: string[], main: string): V1Pod {
  return {
    metadata: { name, namespace: 'test', uid: `uid-${name}` },
    spec: {
      restartPolicy,
      terminationGracePeriodSeconds: 1,
      initContainers: init.map((script, i) => ({ name: `init-${i}`, image: 'busybox:1', command: ['/bin/sh', '-c', script] })),
      containers: [{ name: 'main', image: 'busybox:1', command: ['/bin/sh', '-c', main] }],
    },
  };
}

test('init containers run in order before the app containers; OnFailure stops after success', async () => {
  const marker = join(dir, 'init-order');
  const { worker, status } = makeWorker(shellPod('echo', 'OnFailure', [`echo one >> ${marker}`, `echo two >> ${marker}`], `echo main >> ${marker}; exit 0`));
  worker.start();
  const done = await eventually(() => (status().phase === 'Succeeded' ? status() : undefined), 'pod succeeded');
  assert.equal(await readFile(marker, 'utf8'), 'one\ntwo\nmain\n');
  assert.equal(done.initContainerStatuses?.length, 2);
  assert.equal(
    done.initContainerStatuses?.every((s) => s.state?.terminated?.exitCode === 0),
    true,
  );
  assert.equal(done.containerStatuses?.[0].state?.terminated?.reason, 'Completed');
  assert.equal(done.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
});

test('a failing init container fails the pod under restartPolicy Never', async () => {
  const { worker, status } = makeWorker(shellPod('badinit', 'Never', ['exit 3'], 'sleep 60'));
  worker.start();
  const failed = await eventually(() => (status().phase === 'Failed' ? status() : undefined), 'pod failed');
  assert.equal(failed.initContainerStatuses?.[0].state?.terminated?.exitCode, 3);
  assert.equal(failed.containerStatuses?.[0].state?.waiting?.reason, 'ContainerCreating');
});

test('a crashing container backs off (CrashLoopBackOff) and counts restarts', async () => {
  const { worker, status } = makeWorker(shellPod('crash', 'Always', [], 'exit 1'));
  worker.start();
  // Restart 1 is immediate, restart 2 waits the 200 ms initial back-off of this test's policy.
  const looping = await eventually(() => {
    const s = status().containerStatuses?.[0];
    return s && s.restartCount >= 2 && s.state?.waiting?.reason === 'CrashLoopBackOff' ? s : undefined;
  }, 'CrashLoopBackOff');
  assert.equal(looping.lastState?.terminated?.exitCode, 1);
  assert.equal(status().phase, 'Running');
  await worker.terminate(500);
});

test('tcpSocket and exec probes gate readiness too', async () => {
  const pod = httpPod('echo-probes');
  const container = pod.spec!.containers[0];
  container.readinessProbe = { tcpSocket: { port: 'http' }, periodSeconds: 1 };
  container.livenessProbe = { exec: { command: ['/bin/sh', '-c', 'test -n "$POD_NAME"'] }, periodSeconds: 1, failureThreshold: 1 };
  const { worker, status } = makeWorker(pod);
  worker.start();
  await eventually(() => ready(status()), 'ready through tcp probe');
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(status().containerStatuses?.[0].restartCount, 0, 'the exec liveness probe passes with the container env');
});

test('a missing secret key keeps the container waiting with CreateContainerConfigError, not restarting', async () => {
  const pod = shellPod('noconf', 'Always', [], 'sleep 60');
  pod.spec!.containers[0].env = [{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'missing' } } }];
  const { worker, status } = makeWorker(pod);
  worker.start();
  const waiting = await eventually(() => {
    const s = status().containerStatuses?.[0];
    return s?.state?.waiting?.reason === 'CreateContainerConfigError' ? s : undefined;
  }, 'CreateContainerConfigError');
  assert.match(waiting.state?.waiting?.message ?? '', /missing/);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(status().containerStatuses?.[0].restartCount, 0);
  assert.equal(status().phase, 'Pending');
  await worker.terminate(500);
});
