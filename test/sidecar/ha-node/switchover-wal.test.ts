import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { callMember, type ClientOptions } from '../../../ctl/client.js';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * A switchover must not lose what the old primary committed, nor leave the cluster without a
 * leader: a fast shutdown hands the shutdown checkpoint only to the standbys streaming at that
 * moment, so the leader stops only once its candidate streams. A candidate whose WAL receiver is
 * down is refused after a bounded wait, with the reason, and the primary keeps taking writes; once
 * it streams again the same switchover goes through with every committed row. (The candidate's own
 * refusal to promote without the released WAL is the second line of defence: release.test.ts.)
 */
const user = 'patroni';
const password = 'switchover-secret';
const client: ClientOptions = { credentials: { username: user, password }, timeoutMs: 30_000 };

describe('ha-node switchover to a candidate that does not stream', { timeout: 300_000 }, () => {
  let cluster: TestCluster;

  before(async () => {
    // The candidate waits for the released WAL for ttl seconds, then normal rules apply; ttl leaves a
    // loaded machine room for the old primary to come back as the replica that holds it.
    cluster = await startCluster({
      members: 3,
      ttl: 20,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'walgap',
      env: { KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password },
    });
  });

  after(async () => {
    await cluster?.stop();
  });

  async function streaming(primary: Member): Promise<string[]> {
    const rows = await primary.query<{ application_name: string }>("SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'");
    return rows.map((r) => r.application_name);
  }

  /**
   * Keeps the member from streaming: its startup process is stopped (SIGSTOP), so nothing asks the
   * postmaster for a new WAL receiver, and the running receiver ends cleanly (SIGTERM). Returns
   * what lets recovery go on.
   */
  async function holdRecovery(member: Member): Promise<() => void> {
    const [startup] = await member.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'startup'");
    assert.ok(startup, `${member.name} has a startup process`);
    process.kill(startup.pid, 'SIGSTOP');
    const resume = () => process.kill(startup.pid, 'SIGCONT');
    try {
      await cluster.waitFor(
        `${member.name} without a WAL receiver`,
        async () => {
          const rows = await member.query<{ pid: number }>('SELECT pid FROM pg_stat_wal_receiver WHERE pid IS NOT NULL');
          for (const row of rows) process.kill(row.pid, 'SIGTERM');
          return rows.length === 0;
        },
        20_000,
      );
    } catch (error) {
      resume();
      throw error;
    }
    return resume;
  }

  it('a switchover to a candidate that does not stream is refused, the primary keeps writing, nothing is lost; once it streams it goes through', async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    const candidate = cluster.members.find((m) => m !== primary)!;
    const replicas = cluster.members.filter((m) => m !== primary).map((m) => m.name);
    await cluster.waitFor(
      'two streaming replicas',
      async () => {
        const names = await streaming(primary);
        return replicas.every((name) => names.includes(name));
      },
      90_000,
    );
    await primary.query('CREATE TABLE items (id int PRIMARY KEY)');

    // A writer on the primary for the whole case: every insert acknowledged must be on the final primary.
    let writing = true;
    const acknowledged: number[] = [];
    const failures: string[] = [];
    const writer = (async () => {
      for (let id = 1; writing; id += 1) {
        const target = (await cluster.primary().catch(() => undefined)) ?? primary;
        try {
          await target.query('INSERT INTO items VALUES ($1)', [id]);
          acknowledged.push(id);
        } catch (error) {
          failures.push(`${target.name}: ${(error as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    try {
      const resume = await holdRecovery(candidate);
      let refused: Awaited<ReturnType<typeof callMember>>;
      try {
        await cluster.waitFor(`${candidate.name} no longer streaming`, async () => !(await streaming(primary)).includes(candidate.name), 20_000);
        refused = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, client);
      } finally {
        resume();
      }
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.text, new RegExp(`Switchover failed: candidate ${candidate.name} does not stream from the primary`));
      assert.equal(await cluster.primary(), primary, 'the primary stayed the leader');
      assert.ok(await primary.isWritable(), 'the primary kept taking writes');
      assert.deepEqual(failures, [], 'no write failed while the switchover was refused');

      await cluster.waitFor(`${candidate.name} streams again`, async () => (await streaming(primary)).includes(candidate.name), 60_000);
      let reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, client);
      // A loaded machine may find the candidate's API slow (412): ask again.
      for (let attempt = 0; reply.status !== 200 && attempt < 5; attempt += 1) {
        await new Promise((r) => setTimeout(r, 1000));
        if ((await cluster.primary().catch(() => undefined)) !== primary) break;
        reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, client);
      }
      assert.equal(reply.status, 200, reply.text);
      assert.match(reply.text, new RegExp(`Successfully switched over to "${candidate.name}"`));
      await cluster.waitFor('the candidate writable', async () => (await candidate.isWritable()) || undefined, 60_000);
      await new Promise((r) => setTimeout(r, 500));
    } catch (error) {
      for (const m of cluster.members) process.stderr.write(`--- ${m.name}\n${m.log().split('\n').slice(-25).join('\n')}\n`);
      throw error;
    } finally {
      writing = false;
      await writer;
    }

    for (const member of cluster.members) {
      await cluster.waitFor(
        `${member.name} has every acknowledged row`,
        async () => {
          const rows = await member.query<{ id: number }>('SELECT id FROM items');
          const present = new Set(rows.map((r) => Number(r.id)));
          return acknowledged.every((id) => present.has(id));
        },
        60_000,
      );
    }
    process.stderr.write(`# ${acknowledged.length} acknowledged, ${failures.length} failed during the switchover that went through\n`);
  });
});
