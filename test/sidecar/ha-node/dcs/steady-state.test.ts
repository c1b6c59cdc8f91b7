import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../lib/log.js';
import { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import { kubeConfigAs, startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { leaderPositionOf } from '../../../../sidecar/ha-node/ops/eligibility.js';
import { memberRecord } from '../ops/support.js';

const scope = 'steady';
const quiet = createLogger({ name: 'dcs', level: 'silent' });

/** What the stand-in saw from each client identity: requests by "METHOD path?watch" and new connections. */
class Seen {
  readonly requests: { client: string; method: string; watch: boolean; url: string }[] = [];
  readonly newConnections = new Map<string, number>();
  private readonly sockets = new WeakSet<object>();

  observe(request: IncomingMessage): void {
    const client = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    const url = request.url ?? '';
    const watch = /[?&]watch=(true|1)/.test(url);
    if (!this.sockets.has(request.socket) && !watch) this.newConnections.set(client, (this.newConnections.get(client) ?? 0) + 1);
    this.sockets.add(request.socket);
    this.requests.push({ client, method: request.method ?? '', watch, url });
  }

  /** Requests other than watches from one client since `from` (an index into requests). */
  of(client: string, from = 0): string[] {
    return this.requests
      .slice(from)
      .filter((r) => r.client === client && !r.watch)
      .map((r) => `${r.method} ${r.url.split('?')[0]}`);
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await settle(20);
  }
}

/**
 * At steady state ha-node costs the API server little: the loop reads the watch cache, an
 * unchanged member record is not rewritten, a leader renewal does not wake the other members'
 * loops, and requests share keep-alive connections instead of a TLS handshake each.
 */
describe('ha-node DCS at steady state', () => {
  let api: TestApiServer;
  let dir: string;
  const seen = new Seen();
  let a: LeaseDcs;
  let b: LeaseDcs;
  const wakes: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-steady-'));
    api = await startTestApiServer({ onRequest: (request) => seen.observe(request) });
    const dcs = (name: string, loopResyncMs?: number) =>
      new LeaseDcs({
        kubeConfig: kubeConfigAs(api, `member-${name}`, join(dir, name)),
        namespace: 'default',
        scope,
        name,
        ttl: () => 30,
        requestTimeoutMs: () => 3000,
        logger: quiet,
        loopResyncMs,
      });
    a = dcs('a');
    b = dcs('b', 1500);
    b.onWake((reason) => wakes.push(reason));
    await a.start();
    await b.start();
    await a.getCluster();
    assert.equal(await a.attemptToAcquireLeader(100), true);
    await b.getCluster();
    await until('b sees the leader', () => b.cachedCluster()?.leader?.holder === 'a');
  });

  after(async () => {
    a.stop();
    b.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the member record only when it changed', async () => {
    const record = memberRecord('b', 'http://127.0.0.1:1/ha');
    assert.equal(await b.touchMember(record), true, 'the first record is written');
    const mark = seen.requests.length;
    assert.equal(await b.touchMember({ ...record, heartbeat: record.heartbeat + 10_000 }), false, 'only the heartbeat moved');
    assert.deepEqual(seen.of('member-b', mark), [], 'no request for an unchanged record');
    assert.equal(await b.touchMember({ ...record, heartbeat: record.heartbeat + 20_000, state: 'streaming' }), true);
    assert.deepEqual(seen.of('member-b', mark), ['PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/steady-member-b']);
  });

  it("does not rewrite the lock holder's record for a WAL position its renewal published", async () => {
    const record = memberRecord('a', 'http://127.0.0.1:2/ha', { role: 'primary', xlog_location: 1000 });
    assert.equal(await a.touchMember(record), true);
    const mark = seen.requests.length;
    for (const position of [2000, 3000]) {
      assert.equal(await a.updateLeader(position), true);
      assert.equal(await a.touchMember({ ...record, heartbeat: record.heartbeat + position, xlog_location: position }), false);
    }
    assert.deepEqual(
      seen.of('member-a', mark),
      ['PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/steady-leader', 'PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/steady-leader'],
      'two renewals, no member write',
    );
    // A replica's record is the only place of its position: written when it moves.
    const replica = memberRecord('b', 'http://127.0.0.1:1/ha', { xlog_location: 1000, replay_lsn: 1000 });
    await b.touchMember(replica);
    assert.equal(await b.touchMember({ ...replica, heartbeat: replica.heartbeat + 1, xlog_location: 2000, replay_lsn: 2000 }), true);
    await until(
      'b sees both',
      () => b.cachedCluster()?.leaderRecord?.optime === 3000 && b.cachedCluster()?.members.some((m) => m.name === 'b' && m.xlog_location === 2000) === true,
    );
    // Readers take the newer of the holder's record and the lock's optime.
    assert.equal(leaderPositionOf(b.cachedCluster()!), 3000);
  });

  it('reads the watch cache for the loop while a live leader is in it, with a LIST as safety net', async () => {
    const mark = seen.requests.length;
    for (let i = 0; i < 5; i += 1) assert.equal((await b.clusterForLoop(10_000)).leader?.holder, 'a');
    assert.deepEqual(seen.of('member-b', mark), [], 'five cycles, no request');
    await settle(1600);
    assert.equal((await b.clusterForLoop(10_000)).leader?.holder, 'a');
    assert.deepEqual(seen.of('member-b', mark), ['GET /apis/coordination.k8s.io/v1/namespaces/default/leases'], 'one LIST once the resync interval passed');
  });

  it('does not wake the loop for a renewal by the same holder, and does for a release', async () => {
    wakes.length = 0;
    for (let i = 0; i < 3; i += 1) {
      assert.equal(await a.updateLeader(200 + i), true);
      await until('b sees the renewal', () => b.cachedCluster()?.leaderRecord?.optime === 200 + i);
    }
    assert.equal(wakes.join(','), '', 'renewals only restart the expiry timer');
    assert.equal(await a.deleteLeader(300), true);
    await until('b is woken by the release', () => wakes.includes('leader-changed'));
    const mark = seen.requests.length;
    assert.equal((await b.clusterForLoop(10_000)).leader, undefined);
    assert.deepEqual(seen.of('member-b', mark), ['GET /apis/coordination.k8s.io/v1/namespaces/default/leases'], 'no live leader: the loop reads fresh');
  });

  it('wakes the loop once when a member joins (the leader creates its slot now), not for its later records', async () => {
    const leaderWakes: string[] = [];
    a.onWake((reason) => leaderWakes.push(reason));
    const c = new LeaseDcs({
      kubeConfig: kubeConfigAs(api, 'member-c', join(dir, 'c')),
      namespace: 'default',
      scope,
      name: 'c',
      ttl: () => 30,
      requestTimeoutMs: () => 3000,
      logger: quiet,
    });
    try {
      await c.start();
      const record = memberRecord('c', 'http://127.0.0.1:3/ha');
      assert.equal(await c.touchMember(record), true);
      await until('a is woken by the new member', () => leaderWakes.includes('member-joined'));
      assert.equal(await c.touchMember({ ...record, heartbeat: record.heartbeat + 1, state: 'streaming' }), true);
      await until('a sees the changed record', () => a.cachedCluster()?.members.some((m) => m.name === 'c' && m.state === 'streaming') === true);
      assert.deepEqual(
        leaderWakes.filter((w) => w === 'member-joined'),
        ['member-joined'],
        'a changed record of a known member does not wake',
      );
    } finally {
      c.stop();
    }
  });

  it('reuses one connection for its requests', async () => {
    const before = seen.newConnections.get('member-a') ?? 0;
    const mark = seen.requests.length;
    for (let i = 0; i < 10; i += 1) await a.getCluster();
    assert.equal(seen.of('member-a', mark).length, 10);
    assert.ok(
      (seen.newConnections.get('member-a') ?? 0) - before <= 1,
      `new connections for 10 requests: ${(seen.newConnections.get('member-a') ?? 0) - before}`,
    );
  });
});
