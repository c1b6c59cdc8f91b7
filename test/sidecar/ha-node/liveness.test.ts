import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { callMember, type ClientOptions } from '../../../ctl/client.js';
import { pgBin } from '../../support/postgres.js';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * Demotion, crash recovery and pg_rewind run inside one HA cycle, which may last far longer than
 * ttl. /liveness must stay 200 while such a step makes progress (else the kubelet kills ha-node
 * in the middle of a rewind) and still fail when nothing progresses (here: the rewind frozen).
 */
const user = 'patroni';
const password = 'liveness-secret';
const client: ClientOptions = { credentials: { username: user, password }, timeoutMs: 30_000 };
const ttl = 4;
/** How long the wrapped pg_rewind sleeps before the real one runs: longer than both phases below need. */
const rewindDelaySeconds = 14;

/** A PG_BIN whose pg_rewind sleeps first, then runs the real one. */
function slowRewindBin(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-slow-rewind-'));
  chmodSync(dir, 0o755);
  for (const name of readdirSync(pgBin)) if (name !== 'pg_rewind') symlinkSync(join(pgBin, name), join(dir, name));
  writeFileSync(join(dir, 'pg_rewind'), `#!/bin/sh\nsleep ${rewindDelaySeconds}\nexec ${join(pgBin, 'pg_rewind')} "$@"\n`, { mode: 0o755 });
  return dir;
}

/** The pid of the wrapper shell running the slow pg_rewind, if it runs. */
function rewindWrapperPid(bin: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd[0] === '/bin/sh' && cmd[1] === join(bin, 'pg_rewind')) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** Samples /liveness every 250 ms for `ms`; returns the codes seen. */
async function livenessDuring(member: Member, ms: number): Promise<number[]> {
  const codes: number[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    codes.push(await member.status('/liveness'));
    await new Promise((r) => setTimeout(r, 250));
  }
  return codes;
}

describe('ha-node liveness during a cycle longer than ttl', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let bin: string;

  before(async () => {
    bin = slowRewindBin();
    cluster = await startCluster({
      members: 2,
      ttl,
      loopWait: 1,
      retryTimeout: 1,
      scope: 'alive',
      autoStart: false,
      env: { KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password },
      memberOptions: [{ env: { PG_BIN: bin } }, {}],
    });
  });

  after(async () => {
    const pid = bin ? rewindWrapperPid(bin) : undefined;
    if (pid) process.kill(pid, 'SIGCONT');
    await cluster?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  it('stays alive through a slow rewind and fails once the rewind is frozen', async () => {
    const [old, next] = cluster.members as [Member, Member];
    old.start();
    await cluster.waitFor(`${old.name} primary`, async () => (await cluster.primary()) === old, 120_000);
    next.start();
    await cluster.waitFor(
      `${next.name} streaming`,
      async () => (await old.query("SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'"))[0]?.n === 1,
      90_000,
    );

    // A replica that has just cloned may still be replaying: the switchover refuses a candidate
    // behind maximum_lag_on_failover (412), so wait for it to catch up first.
    await cluster.waitFor(
      `${next.name} caught up`,
      async () =>
        (await old.query<{ ok: boolean }>('SELECT bool_and(pg_current_wal_lsn() - replay_lsn < 1048576) AS ok FROM pg_stat_replication'))[0]?.ok === true,
      90_000,
    );
    let reply = await callMember(old.apiUrl, 'POST', '/switchover', { leader: old.name, candidate: next.name }, client);
    for (let attempt = 0; (reply.status === 412 || reply.status === 503) && attempt < 5; attempt += 1) {
      await new Promise((r) => setTimeout(r, 1000));
      reply = await callMember(old.apiUrl, 'POST', '/switchover', { leader: old.name, candidate: next.name }, client);
    }
    assert.equal(reply.status, 200, `switchover: ${reply.status} ${reply.text}`);

    // The old primary demoted and rewinds; its cycle outlasts 2 x ttl while pg_rewind runs.
    const wrapper = await cluster.waitFor('the slow pg_rewind', async () => rewindWrapperPid(bin), 60_000);
    const whileRewinding = await livenessDuring(old, 2 * ttl * 1000 + 2_000);
    assert.ok(rewindWrapperPid(bin), 'the rewind still runs after the sampling');
    assert.deepEqual([...new Set(whileRewinding)], [200], 'liveness stayed 200 while the rewind made progress');

    // A frozen rewind is no progress: liveness fails within 2 x ttl (plus a probe's slack).
    process.kill(wrapper, 'SIGSTOP');
    try {
      await cluster.waitFor('liveness 503 with the rewind frozen', async () => (await old.status('/liveness')) === 503, 2 * ttl * 1000 + 4_000);
    } finally {
      process.kill(wrapper, 'SIGCONT');
    }
    await cluster.waitFor(`${old.name} alive again after the rewind`, async () => (await old.status('/liveness')) === 200, 60_000);
    await cluster.waitFor(`${old.name} replica of ${next.name}`, async () => (await old.status('/replica')) === 200, 60_000);
    assert.match(old.log(), /pg_rewind finished/);
  });
});
