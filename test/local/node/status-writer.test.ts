// The node agent's status writer against the API server stand-in: a status write meant for a
// deleted pod must never land on a new pod of the same name (the cause of StatefulSet pods being
// deleted twice during rolling updates: the stale status made the successor look finished).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import type { PodWorker } from '../../../local/node/pod-worker.js';
import { StatusWriter } from '../../../local/node/status-writer.js';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { eventually } from './helpers.js';

let server: TestApiServer;
let core: k8s.CoreV1Api;
const body = { metadata: { name: 'db-1' }, spec: { containers: [{ name: 'c', image: 'registry.test/x' }] } };

/** Just what StatusWriter reads from a worker: the pod it was started for and the status it reports. */
function workerFor(pod: k8s.V1Pod, phase: string, terminated = false): PodWorker {
  return {
    uid: pod.metadata?.uid ?? '',
    key: `default/${pod.metadata?.name}`,
    pod,
    isTerminated: terminated,
    status: () => ({ phase }),
  } as unknown as PodWorker;
}

before(async () => {
  server = await startTestApiServer({ https: false });
  core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
});
after(() => server.close());

test('a late status write for a deleted pod does not reach its namesake; a live pod gets its status', async () => {
  const writer = new StatusWriter(core, createLogger({ name: 'status-writer-test', level: 'silent' }));
  try {
    const old = await core.createNamespacedPod({ namespace: 'default', body });
    await core.deleteNamespacedPod({ name: 'db-1', namespace: 'default' });
    const successor = await core.createNamespacedPod({ namespace: 'default', body });
    assert.notEqual(successor.metadata?.uid, old.metadata?.uid);

    writer.schedule(workerFor(successor, 'Running'));
    await eventually(async () => (await core.readNamespacedPod({ name: 'db-1', namespace: 'default' })).status?.phase === 'Running', 'the live pod status');
    // The old pod's worker reports late (a busy node): its write must be refused, not applied by name.
    writer.schedule(workerFor(old, 'Succeeded'));
    await new Promise((r) => setTimeout(r, 500));
    const after = await core.readNamespacedPod({ name: 'db-1', namespace: 'default' });
    assert.equal(after.metadata?.uid, successor.metadata?.uid);
    assert.equal(after.status?.phase, 'Running');

    // A worker that already finished writes nothing at all.
    writer.schedule(workerFor(successor, 'Failed', true));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await core.readNamespacedPod({ name: 'db-1', namespace: 'default' })).status?.phase, 'Running');
  } finally {
    writer.close();
  }
});
