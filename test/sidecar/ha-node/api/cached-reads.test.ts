import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../../../lib/http.js';
import { createLogger } from '../../../../lib/log.js';
import type { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { call, dcsFor, memberRecord, serveOpsApp, snapshotFor } from '../ops/support.js';

const scope = 'cached';

/** Counts the LISTs of this cluster's Leases in the stand-in's per-request debug log (watches are not LISTs). */
function leaseListCounter(): { stream: Writable; count: () => number } {
  let lists = 0;
  let rest = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const entry = JSON.parse(line) as { msg?: string; method?: string; url?: string };
        const url = entry.url ?? '';
        if (entry.msg === 'request' && entry.method === 'GET' && url.includes('/leases?') && url.includes(`cluster%3D${scope}`) && !url.includes('watch='))
          lists += 1;
      }
      done();
    },
  });
  return { stream, count: () => lists };
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * GET /cluster, /config and /history are open to anyone on the pod network: they must be served
 * from the Lease watch cache, so a flood of reads costs the API server nothing, while still
 * showing changes other members make.
 */
describe('ha-node public reads from the watch cache', () => {
  let api: TestApiServer;
  let lists: ReturnType<typeof leaseListCounter>;
  let dcs: LeaseDcs;
  let other: LeaseDcs;
  let server: RunningServer;
  let base: string;

  before(async () => {
    lists = leaseListCounter();
    api = await startTestApiServer({ logger: createLogger({ name: 'apiserver', level: 'debug', destination: lists.stream }) });
    dcs = dcsFor(api, scope, 'a');
    other = dcsFor(api, scope, 'b');
    await dcs.start();
    ({ server } = await serveOpsApp(dcs, snapshotFor('a', scope, dcs), { credentials: { token: 'tok' } }));
    base = server.url.replace(/\/$/, '');
    await other.setConfig({ ttl: 30, loop_wait: 10, retry_timeout: 10 });
    await other.setHistory([[1, 100, 'no recovery target specified', '2026-01-01T00:00:00+00:00', 'b']]);
    await other.touchMember(memberRecord('b', 'http://127.0.0.1:1/ha'));
    await dcs.getCluster(); // the HA loop's read, once per cycle
  });

  after(async () => {
    await server?.close();
    dcs?.stop();
    other?.stop();
    await api?.close();
  });

  it('answers 60 GETs of /cluster, /config and /history with no LIST against the API server', async () => {
    await settle(200);
    const before = lists.count();
    for (let i = 0; i < 20; i += 1) {
      for (const path of ['/cluster', '/config', '/history']) assert.equal((await call(base, 'GET', path)).status, 200, path);
    }
    await settle(200);
    const made = lists.count() - before;
    process.stderr.write(`# 60 public GETs made ${made} Lease LISTs\n`);
    assert.ok(made <= 1, `${made} LISTs for 60 GETs`);
    const history = JSON.parse((await call(base, 'GET', '/history')).text) as unknown[][];
    assert.deepEqual(
      history.map((entry) => entry[0]),
      [1],
      'the history comes from the cache',
    );
  });

  it('still shows what other members write, through the watch', async () => {
    await other.setConfig({ ttl: 40, loop_wait: 10, retry_timeout: 10 });
    const third = dcsFor(api, scope, 'c');
    await third.touchMember(memberRecord('c', 'http://127.0.0.1:2/ha'));
    const deadline = Date.now() + 5000;
    let config: unknown;
    let names: string[] = [];
    while (Date.now() < deadline) {
      config = JSON.parse((await call(base, 'GET', '/config')).text);
      names = (JSON.parse((await call(base, 'GET', '/cluster')).text) as { members: { name: string }[] }).members.map((m) => m.name);
      if ((config as { ttl?: number }).ttl === 40 && names.includes('c')) break;
      await settle(50);
    }
    assert.deepEqual(config, { ttl: 40, loop_wait: 10, retry_timeout: 10 });
    assert.deepEqual(names, ['b', 'c']);
  });

  it('reads fresh while the cache cannot be trusted (no watch)', async () => {
    const before = lists.count();
    const unwatched = dcsFor(api, scope, 'd');
    assert.equal(unwatched.cachedCluster(), undefined, 'no watch, no cache');
    await unwatched.getCluster();
    assert.equal(unwatched.cachedCluster(), undefined, 'a LIST alone does not make a cache that follows changes');
    await settle(200);
    assert.equal(lists.count() - before, 1);
  });
});
