import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../../../lib/http.js';
import { writeConfigWithCas } from '../../../../sidecar/ha-node/api/ops/config-cas.js';
import type { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import type { ConfigWriteCondition, Dcs, DynamicConfig } from '../../../../sidecar/ha-node/dcs/types.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { call, dcsFor, serveOpsApp, snapshotFor } from './support.js';

const scope = 'opscas';
const auth = { Authorization: 'Bearer tok-cas' };
const initialConfig = { ttl: 30, loop_wait: 1, retry_timeout: 3, db: { parameters: { max_connections: 40 } } };

/**
 * A Dcs whose config write is preceded by someone else's write of `other` (a concurrent PATCH that
 * lands between our read and our compare-and-swap), `times` times.
 */
function racedBy(dcs: LeaseDcs, rival: LeaseDcs, other: (round: number) => DynamicConfig, times: number): Dcs {
  let round = 0;
  return Object.assign(Object.create(dcs) as Dcs, {
    getCluster: () => dcs.getCluster(),
    setConfig: async (config: DynamicConfig, condition?: ConfigWriteCondition) => {
      if (round < times) {
        const stored = (await rival.getCluster()).config ?? {};
        await rival.setConfig({ ...stored, ...other(round) });
        round += 1;
      }
      return dcs.setConfig(config, condition);
    },
  });
}

describe('PATCH/PUT /config are compare-and-swap writes', () => {
  let api: TestApiServer;
  let dcsA: LeaseDcs;
  let dcsB: LeaseDcs;
  let serverA: RunningServer;
  let serverB: RunningServer;

  before(async () => {
    api = await startTestApiServer();
    dcsA = dcsFor(api, scope, 'a');
    dcsB = dcsFor(api, scope, 'b');
    await Promise.all([dcsA.start(), dcsB.start()]);
    const options = { credentials: { token: 'tok-cas' }, peerTimeoutMs: 500, outcomeTimeoutMs: 2000 };
    ({ server: serverA } = await serveOpsApp(dcsA, snapshotFor('a', scope, dcsA), options));
    ({ server: serverB } = await serveOpsApp(dcsB, snapshotFor('b', scope, dcsB), options));
    await dcsA.setConfig(initialConfig);
  });

  after(async () => {
    await serverA?.close();
    await serverB?.close();
    dcsA?.stop();
    dcsB?.stop();
    await api?.close();
  });

  it('two concurrent PATCHes of different keys through two members both land, round after round', async () => {
    const baseA = serverA.url.replace(/\/$/, '');
    const baseB = serverB.url.replace(/\/$/, '');
    for (let round = 1; round <= 8; round += 1) {
      const [ra, rb] = await Promise.all([
        call(baseA, 'PATCH', '/config', { maximum_lag_on_failover: 1000 + round }, auth),
        call(baseB, 'PATCH', '/config', { primary_start_timeout: 100 + round }, auth),
      ]);
      assert.deepEqual([ra.status, rb.status], [200, 200], `round ${round}: ${ra.text} / ${rb.text}`);
      const stored = (await dcsB.getCluster()).config;
      assert.equal(stored?.maximum_lag_on_failover, 1000 + round, `round ${round}: ${JSON.stringify(stored)}`);
      assert.equal(stored?.primary_start_timeout, 100 + round, `round ${round}: ${JSON.stringify(stored)}`);
      assert.equal(stored?.ttl, 30);
    }
  });

  it('a write that loses the race re-reads, re-merges and keeps the rival change', async () => {
    const dcs = racedBy(dcsA, dcsB, () => ({ check_timeline: true }), 1);
    const outcome = await writeConfigWithCas(dcs, 'patch', { synchronous_node_count: 2 });
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal(outcome.attempts, 2, 'the first compare-and-swap lost');
    const stored = (await dcsB.getCluster()).config;
    assert.equal(stored?.check_timeline, true, 'the rival change survived');
    assert.equal(stored?.synchronous_node_count, 2, 'our change landed');
  });

  it('re-validation runs on the fresh document: a rival change can make our PATCH invalid, then nothing is written', async () => {
    // The rival raises loop_wait; our ttl, valid against the old document, violates loop_wait + 2*retry_timeout <= ttl.
    await dcsA.setConfig({ ...initialConfig });
    const dcs = racedBy(dcsA, dcsB, () => ({ loop_wait: 10 }), 1);
    const outcome = await writeConfigWithCas(dcs, 'patch', { ttl: 12 });
    assert.equal(outcome.ok, false, JSON.stringify(outcome));
    assert.equal(!outcome.ok && outcome.reply.code, 400);
    assert.match(!outcome.ok ? outcome.reply.text : '', /"ttl" violates loop_wait \+ 2\*retry_timeout <= ttl/);
    const stored = (await dcsB.getCluster()).config;
    assert.deepEqual([stored?.ttl, stored?.loop_wait], [30, 10], 'only the rival change is stored');
  });

  it('after a bounded number of lost races the answer is 409 and our change is not stored', async () => {
    await dcsA.setConfig({ ...initialConfig });
    const dcs = racedBy(dcsA, dcsB, (round) => ({ maximum_lag_on_failover: 5000 + round }), 100);
    const outcome = await writeConfigWithCas(dcs, 'put', { ttl: 40, loop_wait: 2, retry_timeout: 5 }, 3);
    assert.equal(outcome.ok, false, JSON.stringify(outcome));
    assert.equal(!outcome.ok && outcome.reply.code, 409);
    assert.match(!outcome.ok ? outcome.reply.text : '', /changed concurrently 3 times.*nothing was written, retry/);
    const stored = (await dcsB.getCluster()).config;
    assert.deepEqual([stored?.ttl, stored?.maximum_lag_on_failover], [30, 5002], 'the PUT did not land');
  });

  it('an invalid PATCH stores nothing, and an unreachable API server is a 503', async () => {
    const before = (await dcsB.getCluster()).config;
    const r = await call(serverA.url.replace(/\/$/, ''), 'PATCH', '/config', { ttl: 'abc' }, auth);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /"ttl" must be an integer from 5 to 3600/);
    assert.deepEqual((await dcsB.getCluster()).config, before, 'nothing was stored');
    const down = Object.assign(Object.create(dcsA) as Dcs, { getCluster: () => Promise.reject(new Error('connect ECONNREFUSED')) });
    const outcome = await writeConfigWithCas(down, 'patch', { ttl: 40 });
    assert.deepEqual(!outcome.ok && outcome.reply, { code: 503, text: 'DCS is not accessible' });
  });
});
