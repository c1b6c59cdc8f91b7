import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import { lookupUser } from '../../../local/node/run.js';
import { eventually, getJson, httpPodContainer, randomIpPrefix, readyPod, startNodeTestbed, type NodeTestbed } from './helpers.js';

interface WhoAmI {
  status?: number;
  error?: string;
  userInfo?: { username: string; extra?: Record<string, string[]> };
}

/**
 * Every pod reaches the API server under its own identity: a token from a TokenRequest for its
 * service account, bound to the pod, in a kubeconfig of its own; without one (no such account) it
 * gets the node's shared kubeconfig.
 */
describe('local node: a ServiceAccount token per pod', { timeout: 120_000 }, () => {
  const ns = 'identity';
  let dir: string;
  let bed: NodeTestbed;
  const pods: Record<string, k8s.V1Pod> = {};

  const podSpec = (name: string, serviceAccountName?: string): k8s.V1Pod => ({
    metadata: { name, namespace: ns },
    spec: { ...(serviceAccountName ? { serviceAccountName } : {}), terminationGracePeriodSeconds: 1, containers: [httpPodContainer()] },
  });
  const url = (name: string, path: string) => `http://${pods[name].status!.podIP}:8080${path}`;
  const whoami = async (name: string) => (await getJson(url(name, '/whoami'), 5000)).body as WhoAmI;
  const kubeconfigOf = async (name: string) => String(((await getJson(url(name, '/'))).body.env as Record<string, string>).KUBECONFIG);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-pod-identity-'));
    bed = await startNodeTestbed({ dir, ns, ipPrefix: randomIpPrefix(), name: 'pod-identity' });
    await bed.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'web' } } });
    for (const [name, account] of [
      ['web-a', 'web'],
      ['web-b', 'web'],
      ['loner', 'missing'],
    ] as const) {
      await bed.core.createNamespacedPod({ namespace: ns, body: podSpec(name, account) });
    }
    for (const name of ['web-a', 'web-b', 'loner']) pods[name] = await readyPod(bed.core, ns, name, `${name} ready`);
  });
  after(async () => {
    await bed?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives each pod its own kubeconfig and token, which the API server names as that pod', async () => {
    const [a, b] = [await kubeconfigOf('web-a'), await kubeconfigOf('web-b')];
    assert.notEqual(a, b);
    const tokenOf = (path: string) => /token: (\S+)/.exec(readFileSync(path, 'utf8'))?.[1];
    assert.ok(tokenOf(a) && tokenOf(b) && tokenOf(a) !== tokenOf(b), 'distinct tokens');
    assert.notEqual(tokenOf(a), bed.server.token, 'not the admin token');
    const mode = statSync(a);
    assert.equal(mode.mode & 0o777, 0o640);
    const postgres = process.getuid?.() === 0 ? lookupUser('postgres') : undefined;
    if (postgres) assert.equal(mode.gid, postgres.gid, 'readable by the non-root account');
    for (const name of ['web-a', 'web-b']) {
      const answer = await whoami(name);
      assert.equal(answer.status, 201, JSON.stringify(answer));
      assert.equal(answer.userInfo?.username, `system:serviceaccount:${ns}:web`);
      assert.deepEqual(answer.userInfo?.extra, { 'authentication.kubernetes.io/pod-name': [name] });
    }
  });

  it("falls back to the node's kubeconfig when the service account does not exist", async () => {
    const path = await kubeconfigOf('loner');
    assert.equal(path, join(dir, 'node', 'kubeconfig'));
    const answer = await whoami('loner');
    assert.equal(answer.status, 201);
    assert.doesNotMatch(answer.userInfo?.username ?? '', /serviceaccount/);
  });

  it('cuts one pod from the API while the other keeps working, until the refusal is lifted', async () => {
    const lift = bed.server.faults.refuse({ pod: `${ns}/web-a` });
    try {
      assert.ok((await whoami('web-a')).error, 'web-a is cut off');
      assert.equal((await whoami('web-b')).status, 201, 'web-b still reaches the API');
    } finally {
      lift();
    }
    await eventually(async () => (await whoami('web-a')).status === 201, 'web-a back after the lift', 10_000);
  });
});
