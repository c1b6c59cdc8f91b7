import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { settled } from './traffic.js';

/**
 * The primary loses the API server (its pod's token is refused, requests hang). It demotes
 * itself before its lease expires but cannot take its own primary label off; the member that
 * takes over does, while the old one is still cut off, so -rw selects one pod only.
 */
describe('ha-node: the new leader takes the primary label off a former primary it cannot reach', { timeout: 240_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;
  let core: k8s.CoreV1Api;

  const roleOf = async (name: string) => (await core.readNamespacedPod({ namespace: 'default', name })).metadata?.labels?.['keelson.io/role'];

  before(async () => {
    cluster = await startCluster({ members: 3, scope: 'relabel', ttl: 8, loopWait: 1, retryTimeout: 3 });
    primary = await settled(cluster, 2);
    core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await cluster.waitFor('the primary labelled', async () => (await roleOf(primary.name)) === 'primary', 20_000);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('relabels the cut-off primary as a replica once another member leads; after the heal it stays a replica', async () => {
    const lift = cluster.api.faults.refuse({ pod: `default/${primary.name}`, response: 'hang' });
    let successor: string;
    try {
      successor = await cluster.waitFor(
        'another member holding the lease',
        async () => {
          const holder = await cluster.leaderName();
          return holder && holder !== primary.name ? holder : undefined;
        },
        60_000,
      );
      await cluster.waitFor(`${successor} labelled primary`, async () => (await roleOf(successor)) === 'primary', 30_000);
      // Still cut off: only the new leader can have written this.
      await cluster.waitFor(`${primary.name} labelled replica while cut off`, async () => (await roleOf(primary.name)) === 'replica', 15_000);
      const labelled = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'keelson.io/cluster=relabel,keelson.io/role=primary' })).items.map(
        (p) => p.metadata?.name,
      );
      assert.deepEqual(labelled, [successor]);
      assert.equal(await primary.isWritable(), false, 'the cut-off member demoted itself');
    } finally {
      lift();
    }
    await cluster.waitFor(
      `${primary.name} streaming from ${successor} after the heal`,
      async () => (await primary.status('/replica?replication_state=streaming')) === 200,
      90_000,
    );
    assert.equal(await roleOf(primary.name), 'replica');
    assert.equal(await roleOf(successor), 'primary');
  });
});
