import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApiServer, type RunningApiServer } from '../../../local/apiserver/server.js';
import { createLogger } from '../../../lib/log.js';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { keepWriting, settled, timelineOf } from './traffic.js';

/**
 * The API server stops answering for 30 s. Two clusters share it, so one outage covers both
 * cases: without failsafe the primary demotes within retry_timeout and nobody writes for the rest
 * of the outage; with failsafe, every member confirming over the REST API, writes never stop.
 * The failsafe cluster's API requires credentials, so the confirmations carry the members' own.
 */
const ttl = 8;
const loopWait = 1;
const retryTimeout = 3;
/** ha-node bounds each API request to retry_timeout / 2 (at least 1 s). */
const requestBoundMs = Math.max(1000, (retryTimeout * 1000) / 2);
const outageMs = 30_000;

/** Samples writability of every member every 50 ms until `until`: when the old primary stopped, and who wrote after. */
async function watchWriters(
  members: Member[],
  old: Member,
  startedAt: number,
  until: number,
): Promise<{ demotedAfterMs?: number; writersAfterDemotion: Set<string>; rounds: number }> {
  let demotedAfterMs: number | undefined;
  const writersAfterDemotion = new Set<string>();
  let rounds = 0;
  while (Date.now() < until) {
    const round = Date.now();
    const writable = await Promise.all(members.map((m) => m.isWritable()));
    rounds += 1;
    if (demotedAfterMs === undefined && !writable[members.indexOf(old)]) demotedAfterMs = round - startedAt;
    if (demotedAfterMs !== undefined) members.forEach((m, i) => writable[i] && writersAfterDemotion.add(m.name));
    await new Promise((r) => setTimeout(r, Math.max(0, 50 - (Date.now() - round))));
  }
  return { demotedAfterMs, writersAfterDemotion, rounds };
}

describe('ha-node through a 30 s API server outage', { timeout: 300_000 }, () => {
  let dir: string;
  let api: RunningApiServer;
  let plain: TestCluster;
  let safe: TestCluster;
  let plainPrimary: Member;
  let safePrimary: Member;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-outage-'));
    // Requests cut off by the outage are logged as errors by the stand-in; they are expected here.
    api = await startApiServer({ dir, logger: createLogger({ name: 'apiserver', level: 'fatal' }) });
    const common = { ttl, loopWait, retryTimeout, api };
    [plain, safe] = await Promise.all([
      startCluster({ ...common, members: 2, scope: 'plain' }),
      startCluster({
        ...common,
        members: 3,
        scope: 'safe',
        env: { KEELSON_FAILSAFE_MODE: 'true', KEELSON_API_USERNAME: 'keelson', KEELSON_API_PASSWORD: 'failsafe-members-secret' },
      }),
    ]);
    [plainPrimary, safePrimary] = await Promise.all([settled(plain, 1), settled(safe, 2)]);
    await safe.waitFor(
      'failsafe members published on the leader lease',
      async () => {
        const leader = (await safe.leases()).find((l) => l.metadata?.name === 'safe-leader');
        return Object.keys(JSON.parse(leader?.metadata?.annotations?.failsafe ?? '{}')).length === 3;
      },
      20_000,
    );
    await safePrimary.query('CREATE TABLE beats (at timestamptz)');
  });

  after(async () => {
    api?.faults.resume();
    await Promise.all([plain?.stop(), safe?.stop()]);
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('demotes the plain primary within retry_timeout while the failsafe primary keeps writing and stays in -rw', async () => {
    const timelineBefore = await timelineOf(safePrimary);
    const startedAt = Date.now();
    api.faults.pause('hang');
    let writes: Awaited<ReturnType<typeof keepWriting>>;
    let plainView: Awaited<ReturnType<typeof watchWriters>>;
    try {
      [writes, plainView] = await Promise.all([
        keepWriting(safePrimary, startedAt + outageMs),
        watchWriters(plain.members, plainPrimary, startedAt, startedAt + outageMs),
      ]);
    } finally {
      api.faults.resume();
    }
    assert.ok(Date.now() - startedAt >= outageMs, 'the outage lasted 30 s');

    // Failsafe: every write of the 30 s went through, and the node said why.
    // Enough samples to mean something (every 50 ms, fewer on a loaded machine: each round also probes).
    assert.ok(writes.attempts > 100, `${writes.attempts} writes attempted`);
    assert.equal(writes.failures, 0, `${writes.failures} of ${writes.attempts} writes failed during the outage`);
    assert.ok(writes.sawActive, 'failsafe_mode_is_active was shown during the outage');
    assert.ok(writes.probes > 20, `${writes.probes} probe rounds`);
    assert.deepEqual(writes.notPrimary.slice(0, 5), [], `the failsafe primary stayed /primary and ready (${writes.notPrimary.length} other answers)`);
    assert.match(safePrimary.log(), /failsafe mode is enabled and all members are accessible/);

    // Without failsafe: demoted once retry_timeout had passed since the last renewal (renewals
    // come every loop_wait; noticing costs up to two bounded requests), long before ttl.
    const bound = (retryTimeout + loopWait) * 1000 + 2 * requestBoundMs;
    assert.ok(plainView.demotedAfterMs !== undefined, 'the plain primary stopped accepting writes');
    assert.ok(plainView.demotedAfterMs <= bound, `demoted after ${plainView.demotedAfterMs} ms (bound ${bound} ms)`);
    assert.ok(plainView.rounds > 100, `${plainView.rounds} sampling rounds`);
    assert.deepEqual([...plainView.writersAfterDemotion], [], 'nobody accepted writes for the rest of the outage');
    assert.match(plainPrimary.log(), /demoted self( because DCS is not accessible|: failed to update leader lock)/);
    process.stderr.write(`# plain primary demoted ${plainView.demotedAfterMs} ms into the outage; failsafe primary: ${writes.attempts} writes, none failed\n`);

    await safe.waitFor(
      'the same failsafe leader after the outage',
      async () => (await safe.leaderName()) === safePrimary.name && (await safe.primary()) === safePrimary,
      30_000,
    );
    assert.equal(await timelineOf(safePrimary), timelineBefore, 'no promotion happened in the failsafe cluster');
  });

  it('elects a primary again in the plain cluster once the API answers', async () => {
    const primary = await settled(plain, 1);
    assert.ok(await primary.isWritable());
  });
});
