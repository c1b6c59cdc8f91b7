import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { hangTakeoverBoundMs } from '../../../sidecar/ha-node/ha/watches/hang-rules.js';
import { defaultConfig } from '../../../sidecar/ha-node/ha/settings.js';
import { settledPrimary, streamingAgain, writableAmong } from './cluster-waits.js';
import { startCluster, type Member, type TestCluster } from './harness.js';
import { overlappingWriters, sampleWriters } from './writable-sampler.js';

/**
 * A hung primary: its PostgreSQL processes exist but do not answer (SIGSTOP of all of them, or of
 * the postmaster alone while sessions keep committing). At the default primary_hang_timeout,
 * ha-node must fence it and hand the lock over within ttl (plus the race and promotion) and the
 * documented bound, with no two writable members at any sampled instant, and the old primary must
 * come back as a replica.
 */
const ttl = 10;
const loopWait = 2;
const retryTimeout = 4;
const boundMs = hangTakeoverBoundMs({ primary_hang_timeout: defaultConfig.primary_hang_timeout, ttl, retry_timeout: retryTimeout });
/** The lock must be released within ttl of the freeze; a replica's race and promotion come on top. */
const withinTtlMs = ttl * 1000 + 10_000;

function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // gone (fenced)
    }
  }
}

describe('ha-node with a hung primary', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    cluster = await startCluster({ members: 3, ttl, loopWait, retryTimeout, scope: 'hung' });
    primary = await settledPrimary(cluster);
    await primary.query('CREATE TABLE beats (at timestamptz)');
  });

  after(async () => {
    for (const member of cluster?.members ?? []) signal(member.dataDirPids(), 'SIGCONT');
    await cluster?.stop();
  });

  async function newPrimaryAmong(others: Member[]): Promise<Member> {
    return writableAmong(cluster, others, 'a replica promoted', withinTtlMs + 45_000);
  }

  async function backAsReplica(old: Member, successor: Member): Promise<void> {
    await streamingAgain(cluster, old, `${old.name} back as a streaming replica`, 90_000);
    assert.equal(await old.isWritable(), false);
    assert.equal(await cluster.primary(), successor);
  }

  it('keeps a primary that answers slowly: a postmaster stopped 2 s out of every 3 s is not hung', async () => {
    const postmaster = primary.postmasterPid()!;
    const until = Date.now() + 25_000;
    let answered = 0;
    const asker = (async () => {
      while (Date.now() < until) {
        const client = new pg.Client({ connectionString: primary.pgUrl, connectionTimeoutMillis: 10_000 });
        client.on('error', () => undefined);
        await client
          .connect()
          .then(() => client.query('SELECT 1'))
          .then(
            () => (answered += 1),
            () => undefined,
          );
        await client.end().catch(() => undefined);
      }
    })();
    while (Date.now() < until) {
      process.kill(postmaster, 'SIGSTOP');
      await new Promise((r) => setTimeout(r, 2000));
      process.kill(postmaster, 'SIGCONT');
      await new Promise((r) => setTimeout(r, 1000));
    }
    await asker;
    assert.ok(answered > 3, `the slow server answered ${answered} new connections`);
    assert.equal(primary.postmasterPid(), postmaster, 'the slow primary was not fenced');
    assert.equal(await cluster.primary(), primary, 'the leadership stayed');
    assert.doesNotMatch(primary.log(), /fenced the hung primary/);
  });

  it('fences a primary whose every PostgreSQL process is stopped and hands the lock over within the bound', async () => {
    const old = primary;
    const others = cluster.members.filter((m) => m !== old);
    const sampler = sampleWriters(cluster.members);
    await new Promise((r) => setTimeout(r, 500));
    const frozen = old.dataDirPids();
    assert.ok(frozen.length > 3, `postmaster and children found: ${frozen.length}`);
    const stoppedAt = Date.now();
    signal(frozen, 'SIGSTOP');
    primary = await newPrimaryAmong(others);
    const takeoverMs = Date.now() - stoppedAt;
    // A moment with the new primary writing while the old processes would still be stopped.
    await new Promise((r) => setTimeout(r, 2000));
    const survivors = frozen.filter((pid) => old.dataDirPids().includes(pid));
    const resumedAt = Date.now();
    signal(frozen, 'SIGCONT');
    await new Promise((r) => setTimeout(r, 1000));
    const result = await sampler.stop();
    process.stderr.write(`# all of PostgreSQL stopped: new primary writable after ${takeoverMs} ms (bound ${boundMs} ms)\n`);
    assert.ok(takeoverMs <= withinTtlMs, `new primary after ${takeoverMs} ms, ttl ${ttl} s plus the race: ${withinTtlMs} ms`);
    assert.ok(takeoverMs <= boundMs, `new primary after ${takeoverMs} ms, documented bound ${boundMs} ms`);
    assert.ok(result.rounds > 100, `sampled ${result.rounds} times`);
    assert.deepEqual(overlappingWriters(result.writable), [], 'two members writable at a sampled instant');
    assert.ok(
      result.writable.some((s) => s.member === primary.name),
      'the new primary was sampled writable',
    );
    // A write sent before the freeze may be answered a moment after stoppedAt (the reply was on its
    // way); stopped processes answer nothing, so a write counts against the freeze when it was sent
    // after it, or answered only once the processes could run again.
    const afterFreeze = result.writable.filter((s) => s.member === old.name && (s.start > stoppedAt || s.end >= resumedAt));
    assert.deepEqual(afterFreeze, [], 'the old primary was never writable after the freeze');
    assert.deepEqual(survivors, [], 'every stopped PostgreSQL process was killed');
    assert.match(old.log(), /fenced the hung primary/);
    await backAsReplica(old, primary);
  });

  it('detects a postmaster stopped alone while a session keeps committing, and fences that session too', async () => {
    const old = primary;
    const others = cluster.members.filter((m) => m !== old);
    const session = new pg.Client({ connectionString: old.pgUrl, query_timeout: 2000 });
    session.on('error', () => undefined);
    await session.connect();
    const sampler = sampleWriters(cluster.members);
    let sessionOpen = true;
    let committedWhileStopped = 0;
    const postmaster = old.postmasterPid()!;
    let stoppedAt = Number.POSITIVE_INFINITY;
    const writer = (async () => {
      while (sessionOpen) {
        const start = Date.now();
        try {
          await session.query('INSERT INTO beats VALUES (now())');
          sampler.note({ member: old.name, start, end: Date.now() });
          if (start > stoppedAt) committedWhileStopped += 1;
        } catch {
          sessionOpen = false;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    stoppedAt = Date.now();
    process.kill(postmaster, 'SIGSTOP');
    primary = await newPrimaryAmong(others);
    const takeoverMs = Date.now() - stoppedAt;
    await new Promise((r) => setTimeout(r, 2000));
    const sessionEnded = !sessionOpen;
    sessionOpen = false;
    await writer;
    await session.end().catch(() => undefined);
    signal([postmaster], 'SIGCONT');
    const result = await sampler.stop();
    process.stderr.write(
      `# postmaster alone stopped: new primary writable after ${takeoverMs} ms (bound ${boundMs} ms), ${committedWhileStopped} commits meanwhile\n`,
    );
    assert.ok(committedWhileStopped > 0, 'the open session kept committing while the postmaster was stopped');
    assert.ok(sessionEnded, 'the open session was ended by the fence');
    assert.ok(takeoverMs <= withinTtlMs, `new primary after ${takeoverMs} ms, ttl ${ttl} s plus the race: ${withinTtlMs} ms`);
    assert.ok(takeoverMs <= boundMs, `new primary after ${takeoverMs} ms, documented bound ${boundMs} ms`);
    assert.deepEqual(overlappingWriters(result.writable), [], 'two members writable at a sampled instant');
    await backAsReplica(old, primary);
  });
});
