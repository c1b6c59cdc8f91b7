import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { mergePatch } from '../../../local/controllers/kube.js';
import { startEndpointsController } from '../../../local/controllers/endpoints-controller.js';
import type { Controller } from '../../../local/controllers/statefulset-controller.js';
import { kubeConfigAs, startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { eventually } from '../node/helpers.js';

/**
 * A moved primary reaches the -rw Endpoints in one write: the endpoints controller works from its
 * watch caches (no read of the Service or list of the pods per pod change), as the real one does.
 */
const ns = 'default';
const token = 'endpoints-controller';
let server: TestApiServer;
let controller: Controller;
let core: k8s.CoreV1Api;
let dir: string;
let counting = false;
const requests: string[] = [];

async function runningPod(name: string, ip: string, role: string): Promise<void> {
  const created = await core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name, namespace: ns, labels: { app: 'db', role } }, spec: { containers: [{ name: 'db', image: 'test' }] } },
  });
  created.status = { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] };
  await core.replaceNamespacedPodStatus({ namespace: ns, name, body: created });
}

async function listed(service: string): Promise<string[]> {
  const endpoints = await core.readNamespacedEndpoints({ namespace: ns, name: service }).catch(() => undefined);
  return (endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-endpoints-reads-'));
  server = await startTestApiServer({
    onRequest: (request) => {
      if (counting && request.headers.authorization === `Bearer ${token}`) requests.push(`${request.method} ${request.url}`);
    },
  });
  core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
  const port = (name: string) => ({ metadata: { name, namespace: ns }, spec: { ports: [{ name: 'pg', port: 5432 }] } });
  for (const [name, selector] of [
    ['db-rw', { app: 'db', role: 'primary' }],
    ['db-ro', { app: 'db', role: 'replica' }],
    ['other-a', { app: 'other-a' }],
    ['other-b', { app: 'other-b' }],
  ] as const) {
    const body = port(name);
    await core.createNamespacedService({ namespace: ns, body: { ...body, spec: { ...body.spec, selector } } });
  }
  await runningPod('db-0', '127.0.0.10', 'primary');
  await runningPod('db-1', '127.0.0.11', 'replica');
  controller = await startEndpointsController(kubeConfigAs(server, token, join(dir, 'kubeconfig')), createLogger({ name: 'endpoints', level: 'silent' }));
  await eventually(async () => (await listed('db-rw')).join() === '127.0.0.10' && (await listed('db-ro')).join() === '127.0.0.11', 'the first Endpoints');
});

after(async () => {
  await controller?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a swap of the role labels reaches -rw and -ro without reading the Services or listing the pods', async () => {
  counting = true;
  await core.patchNamespacedPod({ namespace: ns, name: 'db-0', body: { metadata: { labels: { role: 'replica' } } } }, mergePatch);
  await core.patchNamespacedPod({ namespace: ns, name: 'db-1', body: { metadata: { labels: { role: 'primary' } } } }, mergePatch);
  await eventually(async () => (await listed('db-rw')).join() === '127.0.0.11' && (await listed('db-ro')).join() === '127.0.0.10', 'the swapped Endpoints');
  counting = false;
  const reads = requests.filter((r) => r.startsWith('GET ') && !r.includes('watch=true') && (/\/services(\/|\?|$)/.test(r) || /\/pods(\/|\?|$)/.test(r)));
  assert.deepEqual(reads, [], 'reads of Services or pods made for the label change');
  assert.ok(
    requests.some((r) => r.startsWith('PUT ') && r.includes('/endpoints/db-rw')),
    `the -rw Endpoints were written: ${requests.join(', ')}`,
  );
});
