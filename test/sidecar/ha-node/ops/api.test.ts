import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../../../lib/http.js';
import type { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { call, dcsFor, memberRecord, replicaDoc, serveOpsApp, snapshotFor, startFakePeer, type FakePeer } from './support.js';

const scope = 'opsapi';
const basic = `Basic ${Buffer.from('admin:s3cret').toString('base64')}`;
const auth = { Authorization: 'Bearer tok-123' };
const initialConfig = {
  ttl: 60,
  loop_wait: 1,
  retry_timeout: 3,
  maximum_lag_on_failover: 1048576,
  db: { use_slots: true, parameters: { max_connections: 40, work_mem: '4MB' } },
};

/**
 * The mutating endpoints over HTTP against an in-process app whose DCS is a real Lease DCS on
 * the API server stand-in. Member "a" serves the API and holds the lock; "b" and "c" are fake
 * peers. A test plays the HA loop's part where a switchover needs one (release, acquire).
 */
describe('ha-node operations API over a real DCS', () => {
  let api: TestApiServer;
  let dcsA: LeaseDcs;
  let dcsB: LeaseDcs;
  let dcsC: LeaseDcs;
  let server: RunningServer;
  let wakes: string[];
  let b: FakePeer;
  let c: FakePeer;
  let base: string;

  before(async () => {
    api = await startTestApiServer();
    dcsA = dcsFor(api, scope, 'a');
    dcsB = dcsFor(api, scope, 'b');
    dcsC = dcsFor(api, scope, 'c');
    await Promise.all([dcsA.start(), dcsB.start(), dcsC.start()]);
    b = await startFakePeer('b', replicaDoc(5_000_000));
    c = await startFakePeer('c', replicaDoc(5_000_000));
    ({ server, wakes } = await serveOpsApp(dcsA, snapshotFor('a', scope, dcsA), {
      credentials: { username: 'admin', password: 's3cret', token: 'tok-123' },
      peerTimeoutMs: 500,
      outcomeTimeoutMs: 4000,
    }));
    base = server.url.replace(/\/$/, '');
    await dcsA.getCluster();
    assert.equal(await dcsA.attemptToAcquireLeader(5_000_000), true);
    await dcsA.touchMember(memberRecord('a', `${base}/ha`, { role: 'primary', xlog_location: 5_000_000 }));
    await dcsB.touchMember(memberRecord('b', b.url));
    await dcsC.touchMember(memberRecord('c', c.url));
    await dcsA.setConfig(initialConfig);
  });

  after(async () => {
    await server?.close();
    for (const dcs of [dcsA, dcsB, dcsC]) dcs?.stop();
    await b?.close();
    await c?.close();
    await api?.close();
  });

  describe('authentication', () => {
    it('mutating endpoints without credentials get 401 with a challenge; reads stay open', async () => {
      for (const [method, path] of [
        ['PATCH', '/config'],
        ['PUT', '/config'],
        ['POST', '/switchover'],
        ['DELETE', '/switchover'],
        ['POST', '/failover'],
        ['POST', '/restart'],
        ['DELETE', '/restart'],
        ['POST', '/reload'],
        ['POST', '/reinitialize'],
      ] as const) {
        const r = await call(base, method, path, { leader: 'a' });
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.match(r.headers.get('www-authenticate') ?? '', /Basic realm="keelson", Bearer/);
        assert.equal(r.text, 'Authentication required');
      }
      assert.equal((await call(base, 'POST', '/reload', undefined, { Authorization: 'Bearer wrong' })).status, 401);
      assert.equal(
        (await call(base, 'POST', '/reload', undefined, { Authorization: `Basic ${Buffer.from('admin:nope').toString('base64')}` })).text,
        'Invalid credentials',
      );
      assert.equal((await call(base, 'GET', '/config')).status, 200);
      assert.equal((await call(base, 'GET', '/cluster')).status, 200);
    });
    it('basic auth and bearer token both succeed', async () => {
      assert.equal((await call(base, 'POST', '/reload', undefined, { Authorization: basic })).status, 202);
      const r = await call(base, 'POST', '/reload', undefined, auth);
      assert.deepEqual([r.status, r.text], [202, 'reload scheduled']);
      assert.ok(wakes.includes('reload'), `wakes: ${wakes.join(', ')}`);
    });
  });

  describe('GET/PATCH/PUT /config', () => {
    it('GET returns the stored document', async () => {
      const r = await call(base, 'GET', '/config');
      assert.deepEqual(JSON.parse(r.text), initialConfig);
    });
    it('invalid PATCH bodies get 400 naming the field and store nothing', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ ttl: 'abc' }, /"ttl" must be an integer from 5 to 3600/],
        [{ loop_wait: -5 }, /"loop_wait" must be an integer from 1 to 600/],
        [{ ttl: 5 }, /"ttl" violates loop_wait \+ 2\*retry_timeout <= ttl/],
        [{ retry_timeout: 40 }, /"retry_timeout" violates/],
        [{ bogus_key: 1 }, /"bogus_key" is not a known configuration key/],
        [{ db: { parameters: { max_connections: [1] } } }, /"db.parameters.max_connections"/],
        [{}, /non-empty JSON object/],
        [[1, 2], /non-empty JSON object/],
        ['{"ttl": ', /not valid JSON/],
      ];
      for (const [body, pattern] of cases) {
        const r = await call(base, 'PATCH', '/config', body, auth);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.match(r.text, pattern);
      }
      assert.deepEqual((await dcsB.getCluster()).config, initialConfig, 'nothing was stored');
    });
    it('a body over the limit gets 413 without a crash', async () => {
      const huge = { db: { parameters: { x: 'y'.repeat(200_000) } } };
      const r = await call(base, 'PATCH', '/config', huge, auth).catch((error: Error) => ({ status: -1, text: error.message }));
      assert.equal(r.status, 413);
      assert.equal((await call(base, 'GET', '/config')).status, 200, 'the server still answers');
    });
    it('PATCH merges, null removes nested keys, and the result is what the DCS holds', async () => {
      const r = await call(
        base,
        'PATCH',
        '/config',
        { ttl: 40, maximum_lag_on_failover: null, db: { parameters: { work_mem: null, max_connections: 41 } } },
        auth,
      );
      assert.equal(r.status, 200, r.text);
      const expected = { ttl: 40, loop_wait: 1, retry_timeout: 3, db: { use_slots: true, parameters: { max_connections: 41 } } };
      assert.deepEqual(JSON.parse(r.text), expected);
      assert.deepEqual((await dcsB.getCluster()).config, expected);
      assert.ok(wakes.includes('config-changed'), `wakes: ${wakes.join(', ')}`);
    });
    it('PUT replaces the whole document after validation', async () => {
      const bad = await call(base, 'PUT', '/config', { ttl: 'x' }, auth);
      assert.equal(bad.status, 400);
      const r = await call(base, 'PUT', '/config', initialConfig, auth);
      assert.equal(r.status, 200);
      assert.deepEqual((await dcsB.getCluster()).config, initialConfig);
    });
  });

  describe('POST /switchover and /failover refusals', () => {
    const expectReply = async (path: string, body: unknown, status: number, text: string | RegExp): Promise<void> => {
      const r = await call(base, 'POST', path, body, auth);
      assert.equal(r.status, status, `${path} ${JSON.stringify(body)} → ${r.status} ${r.text}`);
      if (typeof text === 'string') assert.equal(r.text, text);
      else assert.match(r.text, text);
    };
    it('body rules', async () => {
      await expectReply('/switchover', {}, 400, /non-empty JSON object/);
      await expectReply('/failover', {}, 400, /non-empty JSON object/);
      await expectReply('/failover', { foo: 'bar' }, 400, 'Failover could be performed only to a specific candidate');
      await expectReply('/switchover', { candidate: 'b' }, 400, 'Switchover could be performed only from a specific leader');
      await expectReply('/failover', { candidate: 'b', scheduled_at: '2099-01-01T00:00:00Z' }, 400, "Failover can't be scheduled");
      await expectReply(
        '/switchover',
        { leader: 'a', scheduled_at: '2099-01-01T00:00:00' },
        400,
        'Timezone information is mandatory for the scheduled switchover',
      );
      await expectReply('/switchover', { leader: 'a', scheduled_at: '2001-01-01T00:00:00Z' }, 422, 'Cannot schedule switchover in the past');
      await expectReply('/switchover', { leader: 'a', scheduled_at: 'next tuesday' }, 422, /^Unable to parse scheduled timestamp/);
      await expectReply('/switchover', { leader: 'a', candidate: 'a' }, 400, 'Switchover target and source are the same');
    });
    it('cluster rules (412)', async () => {
      await expectReply('/switchover', { leader: 'b' }, 412, 'leader name does not match');
      await expectReply('/switchover', { leader: 'a', candidate: 'x' }, 412, 'candidate does not exists');
    });
    it('failover to a nofailover member and to an unreachable one: 412', async () => {
      c.doc = replicaDoc(5_000_000, { nofailover: true });
      await expectReply('/failover', { candidate: 'c' }, 412, /^failover is not possible: no good candidates have been found\nc: tagged nofailover$/);
      c.doc = replicaDoc(5_000_000);
      await dcsC.touchMember(memberRecord('c', 'http://127.0.0.1:1/ha'));
      await expectReply('/switchover', { leader: 'a', candidate: 'c' }, 412, /c: not reachable through its API/);
      await dcsC.touchMember(memberRecord('c', c.url));
    });
    it('a lagging candidate is refused while the leader is healthy', async () => {
      b.doc = replicaDoc(1_000);
      await expectReply('/switchover', { leader: 'a', candidate: 'b' }, 412, /b: lags 4999000 bytes/);
      b.doc = replicaDoc(5_000_000);
    });
    it('pause mode: a switchover needs a candidate and cannot be scheduled', async () => {
      assert.equal((await call(base, 'PATCH', '/config', { pause: true }, auth)).status, 200);
      await expectReply('/switchover', { leader: 'a' }, 400, 'Switchover is possible only to a specific candidate in a paused state');
      await expectReply(
        '/switchover',
        { leader: 'a', candidate: 'b', scheduled_at: '2099-01-01T00:00:00Z' },
        400,
        "Can't schedule switchover in the paused state",
      );
      await expectReply('/restart', { schedule: '2099-01-01T00:00:00Z' }, 400, "Can't schedule restart in the paused state");
      assert.equal((await call(base, 'PATCH', '/config', { pause: null }, auth)).status, 200);
    });
    it('synchronous mode: a switchover only to a synchronous member', async () => {
      await dcsA.setSync({ leader: 'a', sync_standby: ['c'] });
      assert.equal((await call(base, 'PATCH', '/config', { synchronous_mode: true }, auth)).status, 200);
      await expectReply('/switchover', { leader: 'a', candidate: 'b' }, 412, 'candidate name does not match with sync_standby');
      await dcsA.setSync({ leader: 'a', sync_standby: [] });
      await expectReply('/switchover', { leader: 'a' }, 412, 'switchover is not possible: can not find sync_standby');
      assert.equal((await call(base, 'PATCH', '/config', { synchronous_mode: null }, auth)).status, 200);
      await dcsA.setSync(undefined);
    });
  });

  describe('scheduled switchover', () => {
    it('202, visible in /cluster, cancelled by DELETE (then 404)', async () => {
      const at = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
      const r = await call(base, 'POST', '/switchover', { leader: 'a', candidate: 'b', scheduled_at: at }, auth);
      assert.deepEqual([r.status, r.text], [202, 'Switchover scheduled']);
      const cluster = JSON.parse((await call(base, 'GET', '/cluster')).text) as { scheduled_switchover?: Record<string, string> };
      assert.deepEqual(cluster.scheduled_switchover, { at: at.replace('Z', '+00:00'), from: 'a', to: 'b' });
      const deleted = await call(base, 'DELETE', '/switchover', undefined, auth);
      assert.deepEqual([deleted.status, deleted.text], [200, 'scheduled switchover deleted']);
      assert.equal((await dcsB.getCluster()).failover, undefined);
      const again = await call(base, 'DELETE', '/switchover', undefined, auth);
      assert.deepEqual([again.status, again.text], [404, 'no switchover is scheduled']);
    });
  });

  describe('switchover and failover outcomes', () => {
    /** Plays the loop: when the failover key appears, the leader releases and the named member acquires. */
    async function playLoop(from: LeaseDcs | undefined, to: Record<string, LeaseDcs>): Promise<void> {
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        const view = await dcsB.getCluster();
        const target = view.failover?.member;
        if (target && to[target]) {
          if (from) assert.equal(await from.deleteLeader(5_000_000), true);
          const next = to[target];
          await next.getCluster();
          assert.equal(await next.attemptToAcquireLeader(5_000_000), true);
          await next.setFailover(undefined);
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the failover key never appeared');
    }

    it('switchover without candidate picks the most advanced member and answers as soon as it leads', async () => {
      b.doc = replicaDoc(4_990_000);
      c.doc = replicaDoc(5_000_000);
      const [r] = await Promise.all([call(base, 'POST', '/switchover', { leader: 'a' }, auth), playLoop(dcsA, { b: dcsB, c: dcsC })]);
      assert.deepEqual([r.status, r.text], [200, 'Successfully switched over to "c"']);
      assert.ok(r.ms < 3000, `answered in ${r.ms} ms`);
      assert.equal((await dcsB.getCluster()).leader?.holder, 'c');
    });
    it('leaderless failover to a lagging candidate is allowed, except in quorum mode without the proof', async () => {
      assert.equal(await dcsC.deleteLeader(5_000_000), true);
      await dcsB.touchMember(memberRecord('b', b.url));
      b.doc = replicaDoc(10);
      // Quorum commit: voter c is ahead of b, so b cannot prove it has every acknowledged commit.
      await dcsC.setSync({ leader: 'c', sync_standby: ['b', 'c'], quorum: 1 });
      const refused = await call(base, 'POST', '/failover', { candidate: 'b' }, auth);
      assert.deepEqual(
        [refused.status, refused.text],
        [412, 'failover is not possible: b cannot prove it has every acknowledged commit (voter c is ahead (5000000 > 10))'],
      );
      assert.equal((await dcsB.getCluster()).failover, undefined, 'nothing written');
      await dcsC.setSync(undefined);
      const [r] = await Promise.all([call(base, 'POST', '/failover', { candidate: 'b' }, auth), playLoop(undefined, { b: dcsB })]);
      assert.deepEqual([r.status, r.text], [200, 'Successfully failed over to "b"']);
      assert.equal((await dcsA.getCluster()).leader?.holder, 'b');
    });
    it('503 "status unknown" when nobody acts in time', async () => {
      b.doc = replicaDoc(5_000_000);
      c.doc = replicaDoc(5_000_000);
      const r = await call(base, 'POST', '/switchover', { leader: 'b', candidate: 'c' }, auth);
      assert.deepEqual([r.status, r.text], [503, 'Switchover status unknown after 4 seconds; operation may still be in progress']);
      await dcsB.setFailover(undefined);
    });
  });

  describe('restart, reload, reinitialize', () => {
    it('restart body rules and the scheduled restart lifecycle', async () => {
      const bad = await call(base, 'POST', '/restart', { role: 'bogus' }, auth);
      assert.deepEqual([bad.status, bad.text], [400, 'PostgreSQL role should be either primary, standby_leader, or replica']);
      assert.equal((await call(base, 'POST', '/restart', { postgres_version: 'abc' }, auth)).text, 'Invalid PostgreSQL version: abc');
      assert.equal((await call(base, 'POST', '/restart', { timeout: 0 }, auth)).text, 'Timeout should be a positive number of seconds');
      assert.equal((await call(base, 'POST', '/restart', { when: 1 }, auth)).text, 'Unknown filter for the scheduled restart: when');
      assert.equal((await call(base, 'POST', '/restart', '{oops', auth)).status, 400);
      assert.deepEqual(Object.values(await call(base, 'DELETE', '/restart', undefined, auth)).slice(0, 2), [404, 'no restarts are scheduled']);
      const at = new Date(Date.now() + 3_600_000).toISOString();
      const scheduled = await call(base, 'POST', '/restart', { schedule: at, role: 'replica' }, auth);
      assert.deepEqual([scheduled.status, scheduled.text], [202, 'Restart scheduled']);
      assert.deepEqual(JSON.parse((await call(base, 'GET', '/restart')).text), { schedule: at.replace('Z', '+00:00'), role: 'replica' });
      const second = await call(base, 'POST', '/restart', { schedule: at }, auth);
      assert.deepEqual([second.status, second.text], [409, 'Another restart is already scheduled']);
      const cancelled = await call(base, 'DELETE', '/restart', undefined, auth);
      assert.deepEqual([cancelled.status, cancelled.text], [200, 'scheduled restart deleted']);
      assert.equal((await call(base, 'GET', '/restart')).status, 404);
    });
    it('a node without PostgreSQL answers 503 to an immediate restart', async () => {
      const r = await call(base, 'POST', '/restart', undefined, auth);
      assert.equal(r.status, 503);
    });
    it('reinitialize on the leader is refused', async () => {
      assert.equal((await dcsA.getCluster()).leader?.holder, 'b');
      await dcsB.getCluster();
      await dcsB.deleteLeader(5_000_000);
      const noLeader = await call(base, 'POST', '/reinitialize', { force: true }, auth);
      assert.deepEqual([noLeader.status, noLeader.text], [503, 'Cluster has no leader, can not reinitialize']);
      await dcsA.getCluster();
      assert.equal(await dcsA.attemptToAcquireLeader(5_000_000), true);
      const r = await call(base, 'POST', '/reinitialize', { force: true }, auth);
      assert.deepEqual([r.status, r.text], [503, 'I am the leader, can not reinitialize']);
    });
    it('unknown mutating paths answer 501, not a crash', async () => {
      assert.equal((await call(base, 'POST', '/nonexistent', {}, auth)).status, 501);
    });
  });
});
