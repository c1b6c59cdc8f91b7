import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * Split-brain safety: a frozen primary ha-node (SIGSTOP past ttl) and an unreachable API server.
 * Writability is sampled every 50 ms on all members with fresh connections.
 */
const ttl = 8;
const retryTimeout = 3;

interface Sampling {
  rounds: number;
  /** Rounds where more than one member accepted a write session. */
  splitRounds: number;
  writersSeen: Set<string>;
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

describe('ha-node under faults', { timeout: 200_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    cluster = await startCluster({ members: 3, ttl, loopWait: 1, retryTimeout, scope: 'faulty' });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 90_000);
    await cluster.waitFor('two streaming replicas', async () => {
      const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
      return codes.filter((c) => c === 200).length === 2;
    }, 60_000);
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
    primary = await cluster.waitFor('a new primary', async () => {
      for (const m of others) if (await m.isWritable()) return m;
      return undefined;
    }, 40_000);
    const fencedPostmaster = frozen.postmasterPid();
    await new Promise((r) => setTimeout(r, 2000));
    frozen.killHaNode('SIGCONT');
    await cluster.waitFor('frozen member back as a streaming replica', async () => (await frozen.status('/replica?replication_state=streaming')) === 200, 60_000);
    const result = await sampling.stop();
    assert.ok(result.rounds > 50, `sampled ${result.rounds} rounds`);
    assert.equal(result.splitRounds, 0, 'two writable primaries were seen in the same round');
    assert.deepEqual([...result.writersSeen].sort(), [frozen.name, primary.name].sort());
    assert.equal(fencedPostmaster, undefined, 'the frozen primary PostgreSQL was stopped by the fencing process');
    assert.match(frozen.log(), /heartbeat overdue: stopping PostgreSQL/);
    assert.ok(Date.now() - stoppedAt > ttl * 1000);
    assert.equal(await cluster.primary(), primary);
  });

  it('demotes the primary when the API server stops answering, and elects again when it returns', async () => {
    const old = primary;
    const pausedAt = Date.now();
    cluster.api.faults.pause('hang');
    let demotedAfterMs: number | undefined;
    try {
      await cluster.waitFor('the primary to stop accepting writes', async () => !(await old.isWritable()), 20_000);
      demotedAfterMs = Date.now() - pausedAt;
      await cluster.waitFor('/primary 503 on the demoted member', async () => (await old.status('/primary')) === 503, 10_000);
      // Nobody else may take over while the API is down: no writer for the rest of the outage.
      const sampling = startSampling(cluster.members);
      await new Promise((r) => setTimeout(r, 8_000));
      const during = await sampling.stop();
      assert.equal(during.writersSeen.size, 0, `writers during the outage: ${[...during.writersSeen].join(', ')}`);
      // Depending on where the cycle was when the API froze: the cluster read or the lease renewal failed.
      assert.match(old.log(), /demoted self( because DCS is not accessible|: failed to update leader lock)/);
    } finally {
      cluster.api.faults.resume();
    }
    // Without failsafe the demotion happens within retry_timeout plus one request bound, before the lease could expire.
    assert.ok(demotedAfterMs !== undefined && demotedAfterMs < ttl * 1000, `demoted after ${demotedAfterMs} ms`);
    primary = await cluster.waitFor('a primary after the outage', () => cluster.primary(), 40_000);
    assert.ok(await primary.isWritable());
    await cluster.waitFor('two streaming replicas after the outage', async () => {
      const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
      return codes.filter((c) => c === 200).length === 2;
    }, 60_000);
  });

  it('keeps the primary writable through an API outage in failsafe mode when every member confirms', async () => {
    // Turn failsafe mode on in the dynamic configuration (what PATCH /config will do).
    const api = cluster.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const name = `${cluster.scope}-config`;
    const lease = await api.readNamespacedLease({ name, namespace: 'default' });
    const config = JSON.parse(lease.metadata?.annotations?.config ?? '{}') as Record<string, unknown>;
    lease.metadata!.annotations!.config = JSON.stringify({ ...config, failsafe_mode: true });
    await api.replaceNamespacedLease({ name, namespace: 'default', body: lease });
    await cluster.waitFor('failsafe members published on the leader lease', async () => {
      const leader = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`);
      return Object.keys(JSON.parse(leader?.metadata?.annotations?.failsafe ?? '{}')).length === 3;
    }, 15_000);
    const [{ tli: timelineBefore }] = await primary.query<{ tli: number }>("SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tli");
    await primary.query('CREATE TABLE IF NOT EXISTS beats (at timestamptz)');

    cluster.api.faults.pause('hang');
    let attempts = 0;
    let failures = 0;
    let sawActive = false;
    try {
      const until = Date.now() + 12_000;
      while (Date.now() < until) {
        attempts += 1;
        try {
          await primary.query('INSERT INTO beats VALUES (now())');
        } catch {
          failures += 1;
        }
        if (!sawActive && attempts % 20 === 0) sawActive = (await primary.get('/ha')).json().failsafe_mode_is_active === true;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      cluster.api.faults.resume();
    }
    assert.ok(attempts > 100, `${attempts} writes attempted`);
    assert.equal(failures, 0, `${failures} of ${attempts} writes failed during the outage`);
    assert.ok(sawActive, 'failsafe_mode_is_active was shown during the outage');
    assert.match(primary.log(), /failsafe mode is enabled and all members are accessible/);
    await cluster.waitFor('the same leader after the outage', async () => (await cluster.leaderName()) === primary.name && (await cluster.primary()) === primary, 20_000);
    const [{ tli: timelineAfter }] = await primary.query<{ tli: number }>("SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tli");
    assert.equal(timelineAfter, timelineBefore, 'no promotion happened');
  });

  it('fails over at once when the primary PostgreSQL dies and primary_start_timeout is 0', async () => {
    const api = cluster.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const name = `${cluster.scope}-config`;
    const lease = await api.readNamespacedLease({ name, namespace: 'default' });
    const config = JSON.parse(lease.metadata?.annotations?.config ?? '{}') as Record<string, unknown>;
    lease.metadata!.annotations!.config = JSON.stringify({ ...config, failsafe_mode: false, primary_start_timeout: 0 });
    await api.replaceNamespacedLease({ name, namespace: 'default', body: lease });
    await cluster.waitFor('the leader lease without failsafe members', async () => {
      const leader = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`);
      return leader?.metadata?.annotations?.failsafe === undefined;
    }, 15_000);
    const old = primary;
    process.kill(old.postmasterPid()!, 'SIGKILL');
    const others = cluster.members.filter((m) => m !== old);
    primary = await cluster.waitFor('another member promoted', async () => {
      for (const m of others) if (await m.isWritable()) return m;
      return undefined;
    }, 30_000);
    assert.match(old.log(), /released the leader lock: the primary did not start within primary_start_timeout/);
    await cluster.waitFor('old primary streaming from the new one', async () => (await old.status('/replica?replication_state=streaming')) === 200, 60_000);
    assert.equal(await cluster.primary(), primary);
  });
});
