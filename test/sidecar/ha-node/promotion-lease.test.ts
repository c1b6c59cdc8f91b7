import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { settled } from './traffic.js';

/**
 * A promotion whose follow-ups outlast the fence window of the lease write before it: the
 * replica's checkpointer is stopped (SIGSTOP), so the CHECKPOINT the new primary issues after
 * pg_promote waits until its statement timeout (5 s), longer than ttl − margin (2.5 s at ttl 4).
 * The server itself keeps answering, so the promoting member keeps its lease renewed and the
 * fencer must leave it alone. (A primary that truly cannot renew is still fenced: faults.test.ts.)
 */
const ttl = 4;

/** The checkpointer process of a member's running server. */
function checkpointerPid(member: Member): number | undefined {
  const postmaster = member.postmasterPid();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('checkpointer')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

function resume(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // gone (fenced with its server)
  }
}

describe('ha-node promotion with slow follow-ups', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let old: Member;
  let stopped: number | undefined;

  before(async () => {
    cluster = await startCluster({ members: 2, ttl, loopWait: 1, retryTimeout: 1, scope: 'slowpromo' });
    old = await settled(cluster, 1);
  });

  after(async () => {
    if (stopped) resume(stopped);
    await cluster?.stop();
  });

  it('keeps the lease renewed while the new primary waits for its checkpoint, so the fencer does not stop it', async () => {
    const candidate = cluster.members.find((m) => m !== old)!;
    const postmaster = candidate.postmasterPid();
    stopped = checkpointerPid(candidate);
    assert.ok(postmaster && stopped, 'the candidate runs, with a checkpointer');
    process.kill(stopped, 'SIGSTOP');
    // A clean stop releases the lease: the replica races at once and promotes.
    await old.stop();
    await cluster.waitFor('the candidate to finish its promotion', async () => /won the leader race/.test(candidate.log()), 60_000);
    resume(stopped);
    stopped = undefined;
    await cluster.waitFor('the candidate writable', () => candidate.isWritable(), 30_000);

    assert.doesNotMatch(candidate.log(), /heartbeat overdue: stopping PostgreSQL/, 'the fencer left the promoting primary alone');
    assert.equal(candidate.postmasterPid(), postmaster, 'the promoted server was never stopped');
    assert.match(candidate.log(), /renewed the leader lease during a long step/);
    assert.equal(await cluster.leaderName(), candidate.name);
    await candidate.query('CREATE TABLE after_promotion (id int)');
  });
});
