import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCluster, type TestCluster } from './harness.js';

/**
 * A member tagged nofailover never creates the cluster nor takes the lock (Patroni's rule): alone
 * it waits and says why; an eligible member bootstraps, and the tagged one clones from it; when
 * the eligible primary dies the tagged replica stays a replica.
 */
const ttl = 6;

describe('ha-node nofailover', { timeout: 200_000 }, () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster({
      members: 2,
      ttl,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'nofail',
      autoStart: false,
      memberOptions: [{ tags: { nofailover: true } }, {}],
    });
  });

  after(async () => {
    await cluster?.stop();
  });

  it('does not bootstrap when every member present is tagged nofailover, and logs why', async () => {
    const [tagged] = cluster.members;
    tagged!.start();
    await cluster.waitFor(
      'the nofailover member to explain why it waits',
      async () => /tagged nofailover, so this member may not bootstrap the cluster/.test(tagged!.log()),
      30_000,
    );
    // It published itself (so the loop ran with the DCS reachable) but nothing else happened.
    await cluster.waitFor(
      'the member record of the waiting member',
      async () => (await cluster.leases()).some((l) => l.metadata?.name === 'nofail-member-nofail-0'),
      10_000,
    );
    const leases = await cluster.leases();
    const config = leases.find((l) => l.metadata?.name === 'nofail-config');
    assert.equal(config?.metadata?.annotations?.initialize, undefined, 'no initialize key was taken');
    assert.equal(await cluster.leaderName(), undefined);
    assert.equal(existsSync(join(tagged!.dataDir, 'PG_VERSION')), false, 'initdb never ran');
    assert.equal(tagged!.postmasterPid(), undefined);
  });

  it('lets the eligible member bootstrap and the tagged one clone from it', async () => {
    const [tagged, eligible] = cluster.members;
    eligible!.start();
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    assert.equal(primary, eligible);
    await cluster.waitFor('the tagged member streaming', async () => (await tagged!.status('/replica?replication_state=streaming')) === 200, 90_000);
    assert.equal((await tagged!.get('/ha')).json().role, 'replica');
    assert.equal(await tagged!.status('/replica?tag_nofailover=true'), 200);
  });

  it('never promotes the tagged replica when the eligible primary dies', async () => {
    const [tagged, eligible] = cluster.members;
    eligible!.killPod();
    // The lease lapses after ttl; the tagged member then declines the race on every cycle.
    await cluster.waitFor(
      'the tagged member to decline the race',
      async () => /after a failed race \(tagged nofailover\)/.test(tagged!.log()),
      ttl * 1000 + 20_000,
    );
    assert.equal(await tagged!.isWritable(), false);
    assert.notEqual(await cluster.leaderName(), tagged!.name, 'the lease still names the dead primary');
    assert.equal(await tagged!.status('/replica'), 200, 'it keeps serving reads');
  });
});
