import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { settledPrimary, streamingAgain, writableAmong } from './cluster-waits.js';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { PodStatusReporter } from './kubelet.js';

/**
 * Split-brain safety: a frozen primary ha-node (SIGSTOP past ttl), early takeover refused while
 * any source says the leader lives, and an immediate failover with primary_start_timeout 0.
 * Writability is sampled every 50 ms on all members with fresh connections. (API server outages:
 * outage.test.ts.)
 */
const ttl = 8;
const retryTimeout = 3;
const loopWait = 1;

interface Sampling {
  rounds: number;
  /** Rounds where more than one member accepted a write session. */
  splitRounds: number;
  writersSeen: Set<string>;
}

/** The first JSON log line after `since` (epoch ms) whose text matches, with its time. */
function logLine(log: string, pattern: RegExp, since: number): { time: number; text: string } | undefined {
  for (const text of log.split('\n')) {
    if (!pattern.test(text)) continue;
    const time = Date.parse(String((JSON.parse(text) as { time?: string }).time));
    if (time >= since) return { time, text };
  }
  return undefined;
}

/** The winner's race line (logged once promotion is through, possibly after its first write). */
function raceWon(cluster: TestCluster, winner: Member, since: number): Promise<{ time: number; text: string; early: boolean }> {
  return cluster.waitFor(
    `${winner.name} to log its race`,
    async () => {
      const line = logLine(winner.log(), /won the leader race/, since);
      return line && { ...line, early: line.text.includes('"evidence"') };
    },
    15_000,
  );
}

function startSampling(members: Member[]): { stop: () => Promise<Sampling> } {
  const result: Sampling = { rounds: 0, splitRounds: 0, writersSeen: new Set() };
  let running = true;
  const done = (async () => {
    while (running) {
      const started = Date.now();
      const writable = await Promise.all(members.map((m) => m.isWritable()));
      result.rounds += 1;
      const writers = members.filter((_, i) => writable[i]);
      if (writers.length > 1) result.splitRounds += 1;
      for (const w of writers) result.writersSeen.add(w.name);
      await new Promise((r) => setTimeout(r, Math.max(0, 50 - (Date.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return result;
    },
  };
}

describe('ha-node under faults', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    cluster = await startCluster({ members: 3, ttl, loopWait, retryTimeout, scope: 'faulty' });
    primary = await settledPrimary(cluster);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('never has two writable primaries when the primary ha-node freezes past ttl, and fences the frozen one', async () => {
    const frozen = primary;
    const others = cluster.members.filter((m) => m !== frozen);
    const sampling = startSampling(cluster.members);
    frozen.killHaNode('SIGSTOP');
    const stoppedAt = Date.now();
    primary = await writableAmong(cluster, others, 'a new primary', 40_000);
    const promotedAfterMs = Date.now() - stoppedAt;
    // A frozen process still completes TCP handshakes and its pod runs: no early takeover, the
    // lease had to lapse (its last renewal came at most about one loop before the freeze).
    assert.equal((await raceWon(cluster, primary, stoppedAt)).early, false, 'won by lease expiry');
    assert.ok(promotedAfterMs > (ttl - 2 * loopWait - 1) * 1000, `promoted ${promotedAfterMs} ms after the freeze`);
    const fencedPostmaster = frozen.postmasterPid();
    // Keep the old leader frozen for a while with the new primary writing: the sampling window
    // where a split brain would show.
    await new Promise((r) => setTimeout(r, 2000));
    frozen.killHaNode('SIGCONT');
    await streamingAgain(cluster, frozen, 'frozen member back as a streaming replica', 60_000);
    const result = await sampling.stop();
    assert.ok(result.rounds > 50, `sampled ${result.rounds} rounds`);
    assert.equal(result.splitRounds, 0, 'two writable primaries were seen in the same round');
    assert.deepEqual([...result.writersSeen].sort(), [frozen.name, primary.name].sort());
    assert.equal(fencedPostmaster, undefined, 'the frozen primary PostgreSQL was stopped by the fencing process');
    assert.match(frozen.log(), /heartbeat overdue: stopping PostgreSQL/);
    assert.ok(Date.now() - stoppedAt > ttl * 1000);
    assert.equal(await cluster.primary(), primary);
  });

  it('does not take over early while the REST API or PostgreSQL of the leader still answers', async () => {
    const old = primary;
    const others = cluster.members.filter((m) => m !== old);
    const kubelet = new PodStatusReporter(cluster.kubeConfig, 'default', 0);
    const transitionsBefore = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`)?.spec?.leaseTransitions;
    // One source says dead: the kubelet (wrongly) reports the container terminated; all runs.
    await kubelet.terminated(old.name, 137);
    const replicaLogs = (): string => others.map((m) => m.log()).join('\n');
    const oneSignal = /"evidence":\{"kubelet":"dead","postgres":"alive","api":"alive"\}/;
    await cluster.waitFor('a replica to weigh the kubelet report alone', async () => oneSignal.test(replicaLogs()), 15_000);
    assert.equal(await cluster.leaderName(), old.name);
    assert.ok(await old.isWritable(), 'the primary kept running');

    // Two sources say dead: PostgreSQL is killed while ha-node is frozen (it cannot restart it),
    // but the frozen process's API port still completes the handshake.
    const frozenAt = Date.now();
    old.killHaNode('SIGSTOP');
    process.kill(old.postmasterPid()!, 'SIGKILL');
    const twoSignals = /"evidence":\{"kubelet":"dead","postgres":"dead","api":"alive"\}/;
    await cluster.waitFor('a replica to weigh kubelet and PostgreSQL against the live API', async () => twoSignals.test(replicaLogs()), 15_000);
    primary = await writableAmong(cluster, others, 'a new primary after the lease lapsed', 40_000);
    const promotedAfterMs = Date.now() - frozenAt;
    assert.equal((await raceWon(cluster, primary, frozenAt)).early, false, 'won by lease expiry');
    assert.doesNotMatch(replicaLogs(), /took over the lock of crashed/);
    assert.ok(promotedAfterMs > (ttl - 2 * loopWait - 1) * 1000, `promoted ${promotedAfterMs} ms after the freeze`);
    const transitionsAfter = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`)?.spec?.leaseTransitions;
    assert.equal(transitionsAfter, (transitionsBefore ?? 0) + 1, 'one ordinary takeover');

    old.killHaNode('SIGCONT');
    await kubelet.running(old.name);
    await streamingAgain(cluster, old, 'the frozen member back as a streaming replica', 90_000);
    assert.equal(await cluster.primary(), primary);
  });

  it('takes over only after the fencer stopped PostgreSQL when the primary ha-node alone is killed', async () => {
    const old = primary;
    const others = cluster.members.filter((m) => m !== old);
    const sampling = startSampling(cluster.members);
    const killedAt = Date.now();
    // ha-node dies, PostgreSQL and the fencer live on: the kubelet and the API port say dead,
    // PostgreSQL answers until the fencer stops it at its deadline, ttl minus a margin.
    old.killHaNode('SIGKILL');
    primary = await writableAmong(cluster, others, 'a new primary', 40_000);
    const result = await sampling.stop();
    assert.equal(result.splitRounds, 0, 'two writable primaries were seen in the same round');
    const won = await raceWon(cluster, primary, killedAt);
    const wonAt = won.time;
    const fencedAt = logLine(old.log(), /heartbeat overdue: stopping PostgreSQL/, killedAt)?.time;
    assert.ok(fencedAt !== undefined, 'the fencer stopped the orphaned PostgreSQL');
    assert.ok(wonAt > fencedAt, `lease taken at +${wonAt - killedAt} ms, fence at +${fencedAt - killedAt} ms`);
    const path = won.early ? 'early takeover' : 'lease expiry';
    process.stderr.write(`# ha-node alone killed: fenced at +${fencedAt - killedAt} ms, lease taken by ${path} at +${wonAt - killedAt} ms\n`);
    old.start();
    await streamingAgain(cluster, old, 'the old primary back as a streaming replica', 90_000);
    assert.equal(await cluster.primary(), primary);
  });

  it('fails over at once when the primary PostgreSQL dies and primary_start_timeout is 0', async () => {
    const api = cluster.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const name = `${cluster.scope}-config`;
    const lease = await api.readNamespacedLease({ name, namespace: 'default' });
    const config = JSON.parse(lease.metadata?.annotations?.config ?? '{}') as Record<string, unknown>;
    lease.metadata!.annotations!.config = JSON.stringify({ ...config, failsafe_mode: false, primary_start_timeout: 0 });
    await api.replaceNamespacedLease({ name, namespace: 'default', body: lease });
    await cluster.waitFor(
      'the leader lease without failsafe members',
      async () => {
        const leader = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`);
        return leader?.metadata?.annotations?.failsafe === undefined;
      },
      15_000,
    );
    const old = primary;
    process.kill(old.postmasterPid()!, 'SIGKILL');
    const others = cluster.members.filter((m) => m !== old);
    primary = await writableAmong(cluster, others, 'another member promoted', 30_000);
    assert.match(old.log(), /released the leader lock: the primary did not start within primary_start_timeout/);
    await streamingAgain(cluster, old, 'old primary streaming from the new one', 60_000);
    assert.equal(await cluster.primary(), primary);
  });
});
