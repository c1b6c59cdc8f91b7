import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseProcStat } from '../../../sidecar/ha-node/fence/kill-server.js';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { settled } from './traffic.js';

/**
 * A promotion whose follow-ups outlast the fence window of the lease write before it: the
 * replicas' checkpointers are stopped (SIGSTOP), so the CHECKPOINT the new primary issues after
 * pg_promote waits until its statement timeout (5 s), longer than ttl − margin (2.5 s at ttl 4).
 * The server keeps answering, so the promoting member keeps its lease renewed and the fencer
 * leaves it alone; cut from the API in the same wait, its renewals fail and it is fenced as before.
 */
const ttl = 4;

/** The checkpointer process of a member's running server. */
function checkpointerPid(member: Member): number | undefined {
  const postmaster = member.postmasterPid();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8'))?.ppid;
      if (ppid === postmaster && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('checkpointer')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

function resume(pids: number[]): void {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone (fenced with its server)
    }
  }
}

/** Stops the checkpointer of each member (it resumes with resume()). */
function stopCheckpointers(members: Member[], stopped: number[]): void {
  for (const member of members) {
    const pid = checkpointerPid(member);
    assert.ok(pid, `${member.name} runs, with a checkpointer`);
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
  }
}

/** The member among `members` that logged a won race. */
function raceWinner(members: Member[]): Member | undefined {
  return members.find((m) => /won the leader race/.test(m.log()));
}

describe('ha-node promotion with slow follow-ups', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;
  const stopped: number[] = [];

  before(async () => {
    cluster = await startCluster({ members: 3, ttl, loopWait: 1, retryTimeout: 1, scope: 'slowpromo' });
    primary = await settled(cluster, 2);
  });

  after(async () => {
    resume(stopped);
    await cluster?.stop();
  });

  it('keeps the lease renewed while the new primary waits for its checkpoint, so the fencer does not stop it', async () => {
    const candidates = cluster.members.filter((m) => m !== primary);
    const postmasters = candidates.map((m) => m.postmasterPid());
    stopCheckpointers(candidates, stopped);
    // A clean stop releases the lease: a replica races at once and promotes.
    await primary.stop();
    const winner = await cluster.waitFor('a replica to finish its promotion', async () => raceWinner(candidates), 60_000);
    resume(stopped);
    await cluster.waitFor('the new primary writable', () => winner.isWritable(), 30_000);

    assert.doesNotMatch(winner.log(), /heartbeat overdue: stopping PostgreSQL/, 'the fencer left the promoting primary alone');
    assert.equal(winner.postmasterPid(), postmasters[candidates.indexOf(winner)], 'the promoted server was never stopped');
    assert.match(winner.log(), /renewed the leader lease during a long step/);
    assert.equal(await cluster.leaderName(), winner.name);
    await winner.query('CREATE TABLE after_promotion (id int)');
    primary = winner;
  });

  it('still fences a promoting primary whose lease renewals cannot reach the API', async () => {
    const candidate = cluster.members.find((m) => m !== primary && m.process?.exitCode === null)!;
    await cluster.waitFor(
      `${candidate.name} streaming from ${primary.name}`,
      async () => (await candidate.status('/replica?replication_state=streaming')) === 200,
      60_000,
    );
    stopCheckpointers([candidate], stopped);
    const since = candidate.log().length;
    await primary.stop();
    await cluster.waitFor(`${candidate.name} to take writes`, async () => /PostgreSQL takes writes/.test(candidate.log().slice(since)), 60_000);
    // Cut from the API while its CHECKPOINT waits: the renewals time out, the fence deadline stays.
    const lift = cluster.api.faults.refuse({ pod: `default/${candidate.name}`, response: 'hang' });
    try {
      await cluster.waitFor(
        'the fencer to stop the promoting primary',
        async () => /heartbeat overdue: stopping PostgreSQL/.test(candidate.log().slice(since)),
        30_000,
      );
    } finally {
      lift();
      resume(stopped);
    }
    assert.match(candidate.log().slice(since), /could not renew the leader lease during a long step/);
  });
});
