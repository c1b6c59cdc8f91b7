import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { settled, timelineOf } from './traffic.js';

/**
 * Only the failsafe primary is cut from the API server, long enough for its lease to lapse, while
 * a writer keeps its WAL moving fast; then the cut is lifted. The replicas must not race while
 * the primary confirms itself through failsafe, and once the API answers again the primary must
 * take its lease back: its replicas stream from it, so none of them can be ahead of it.
 */
const ttl = 8;
/** WAL per statement: enough that the replicas receive more while the primary's race asks them. */
const messageBytes = 128 * 1024;

interface Writer {
  stop(): Promise<{ commits: number; failures: number; longestGapMs: number }>;
}

/** Commits a WAL-only message in a tight loop on one session (reconnecting after an error). */
function startWriter(member: Member): Writer {
  let running = true;
  let commits = 0;
  let failures = 0;
  let longestGapMs = 0;
  const done = (async () => {
    let client: pg.Client | undefined;
    let last = Date.now();
    while (running) {
      try {
        if (!client) {
          client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 2000, query_timeout: 5000 });
          client.on('error', () => undefined);
          await client.connect();
        }
        await client.query("SELECT pg_logical_emit_message(true, 'keelson-test', repeat('x', $1))", [messageBytes]);
        commits += 1;
        longestGapMs = Math.max(longestGapMs, Date.now() - last);
        last = Date.now();
      } catch {
        failures += 1;
        await client?.end().catch(() => undefined);
        client = undefined;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await client?.end().catch(() => undefined);
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return { commits, failures, longestGapMs };
    },
  };
}

/** The actions a member's HA loop logged since `since` (epoch ms). */
function actionsSince(member: Member, since: number): string[] {
  const actions: string[] = [];
  for (const line of member.log().split('\n')) {
    if (!line.includes('"action"')) continue;
    const entry = JSON.parse(line) as { time?: string; action?: string };
    if (Date.parse(String(entry.time)) >= since && entry.action) actions.push(entry.action);
  }
  return actions;
}

describe('ha-node failsafe: the primary comes back to the API server', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    cluster = await startCluster({ members: 3, scope: 'back', ttl, loopWait: 1, retryTimeout: 3, env: { KEELSON_FAILSAFE_MODE: 'true' } });
    primary = await settled(cluster, 2);
    await cluster.waitFor(
      'failsafe members published on the leader lease',
      async () => {
        const leader = (await cluster.leases()).find((l) => l.metadata?.name === 'back-leader');
        return Object.keys(JSON.parse(leader?.metadata?.annotations?.failsafe ?? '{}')).length === 3;
      },
      20_000,
    );
  });

  after(async () => {
    await cluster?.stop();
  });

  it('keeps the primary and its lease, with no race by its replicas, while it writes through the cut and after', async () => {
    const replicas = cluster.members.filter((m) => m !== primary);
    const postmaster = primary.postmasterPid();
    const timelineBefore = await timelineOf(primary);
    const writer = startWriter(primary);
    const cutAt = Date.now();
    const lift = cluster.api.faults.refuse({ pod: `default/${primary.name}`, response: 'hang' });
    let liftedAt: number;
    try {
      // The lease lapses ttl after the primary's last renewal; each replica then decides about the race.
      await cluster.waitFor(
        'both replicas to see the lease lapse',
        async () => replicas.every((r) => actionsSince(r, cutAt).some((a) => /race|promoted/.test(a))),
        60_000,
      );
    } finally {
      lift();
      liftedAt = Date.now();
    }
    const back = await cluster.waitFor(
      'the primary to decide once the API answers',
      async () => {
        const actions = actionsSince(primary, liftedAt);
        return actions.find((a) => /acquired session lock|demoted self/.test(a));
      },
      60_000,
    );
    await cluster.waitFor(
      'the primary renewing its lease',
      async () => actionsSince(primary, liftedAt).includes('no action: I am the leader with the lock') || /demoted/.test(back),
      30_000,
    );
    const writes = await writer.stop();
    process.stderr.write(`# ${writes.commits} commits of ${messageBytes} bytes, ${writes.failures} failed, longest gap ${writes.longestGapMs} ms\n`);

    for (const replica of replicas) {
      const raced = actionsSince(replica, cutAt).filter((a) => /race|promoted/.test(a) && !a.startsWith('no race'));
      assert.deepEqual(raced, [], `${replica.name} did not race while ${primary.name} confirmed itself through failsafe`);
      assert.ok(
        actionsSince(replica, cutAt).includes(`no race: ${primary.name} confirmed it is alive through failsafe`),
        `${replica.name} said why it did not race`,
      );
    }
    assert.equal(back, 'acquired session lock as a leader', 'the primary took its lease back');
    assert.equal(primary.postmasterPid(), postmaster, 'the primary was never stopped');
    assert.equal(await timelineOf(primary), timelineBefore, 'no promotion happened');
    assert.equal(await cluster.leaderName(), primary.name);
    assert.ok(writes.commits > 50, `${writes.commits} commits`);
    assert.equal(writes.failures, 0, 'no write failed');
  });
});
