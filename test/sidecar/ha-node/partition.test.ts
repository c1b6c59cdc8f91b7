import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { keepWriting, sampleWritable, settled, timelineOf } from './traffic.js';

/**
 * Only the primary loses the API server for 30 s (its pod's token is refused; the replicas still
 * reach the API). With failsafe mode the replicas confirm the leader over the REST API, so the
 * primary keeps taking writes and stays in -rw, and no replica becomes writable meanwhile.
 */
const outageMs = 30_000;

describe('ha-node failsafe: only the primary cut from the API server', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    cluster = await startCluster({ members: 3, scope: 'cut', ttl: 8, loopWait: 1, retryTimeout: 3, env: { KEELSON_FAILSAFE_MODE: 'true' } });
    primary = await settled(cluster, 2);
    await cluster.waitFor(
      'failsafe members published on the leader lease',
      async () => {
        const leader = (await cluster.leases()).find((l) => l.metadata?.name === 'cut-leader');
        return Object.keys(JSON.parse(leader?.metadata?.annotations?.failsafe ?? '{}')).length === 3;
      },
      20_000,
    );
    await primary.query('CREATE TABLE beats (at timestamptz)');
  });

  after(async () => {
    await cluster?.stop();
  });

  it('keeps every write and -rw on the primary, and never a second writable member', async () => {
    const timelineBefore = await timelineOf(primary);
    const startedAt = Date.now();
    // A partition drops packets: the primary's requests hang until its own timeouts give up.
    const lift = cluster.api.faults.refuse({ pod: `default/${primary.name}`, response: 'hang' });
    let writes: Awaited<ReturnType<typeof keepWriting>>;
    let sampled: Awaited<ReturnType<typeof sampleWritable>>;
    try {
      [writes, sampled] = await Promise.all([keepWriting(primary, startedAt + outageMs), sampleWritable(cluster.members, startedAt + outageMs)]);
    } finally {
      lift();
    }
    assert.ok(Date.now() - startedAt >= outageMs, 'the cut lasted 30 s');
    assert.match(primary.log(), /failsafe mode is enabled and all members are accessible/, 'the primary did lose the API server');

    // Enough samples to mean something (every 50 ms, fewer on a loaded machine: each round also probes).
    assert.ok(writes.attempts > 100, `${writes.attempts} writes attempted`);
    assert.equal(writes.failures, 0, `${writes.failures} of ${writes.attempts} writes failed while the primary was cut off`);
    assert.ok(writes.sawActive, 'failsafe_mode_is_active was shown');
    assert.ok(writes.probes > 20, `${writes.probes} probe rounds`);
    assert.deepEqual(writes.notPrimary.slice(0, 5), [], `/primary and /readiness stayed 200 (${writes.notPrimary.length} other answers)`);

    assert.ok(sampled.rounds > 100, `${sampled.rounds} sampling rounds`);
    assert.deepEqual(sampled.splitRounds.slice(0, 5), [], `never two writable members (${sampled.splitRounds.length} rounds with several)`);
    for (const member of cluster.members) {
      if (member !== primary) assert.equal(sampled.writableRounds[member.name], 0, `${member.name} never became writable`);
    }
    process.stderr.write(
      `# primary cut from the API for ${outageMs} ms: ${writes.attempts} writes, none failed; ${sampled.rounds} sampling rounds, one writer\n`,
    );

    await cluster.waitFor(
      'the same leader renewing its lease again',
      async () => (await cluster.leaderName()) === primary.name && (await cluster.primary()) === primary,
      30_000,
    );
    assert.equal(await timelineOf(primary), timelineBefore, 'no promotion happened');
  });
});
