import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type TestPostgres } from '../../../support/postgres.js';
import { startReplica, type TestReplica } from '../../../support/replica.js';
import { eventually, get, parseMetrics, startTestExporter, valueOf } from '../helpers.js';

const upPaths = ['/up', '/health', '/liveness', '/readiness', '/read'];
const primaryPaths = ['/primary', '/leader', '/master', '/read-write', '/rw'];
const replicaPaths = ['/replica', '/standby', '/read-only', '/ro', '/slave'];
const intervalMs = 300;

async function statuses(base: string, paths: string[]): Promise<Array<[string, number, string]>> {
  return Promise.all(
    paths.map(async (path) => {
      const r = await get(`${base}${path}`);
      return [path, r.status, r.body] as [string, number, string];
    }),
  );
}

function expectAll(results: Array<[string, number, string]>, status: number, body: string): void {
  for (const [path, actual, text] of results) {
    assert.equal(actual, status, `${path} answered ${actual}, expected ${status}`);
    assert.equal(text, body, `${path} body`);
  }
}

describe('health endpoints follow the background probe', () => {
  let primary: TestPostgres;
  let replica: TestReplica;
  let onPrimary: Awaited<ReturnType<typeof startTestExporter>>;
  let onReplica: Awaited<ReturnType<typeof startTestExporter>>;

  before(async () => {
    primary = await startPostgres({ settings: { max_wal_senders: 5 } });
    replica = await startReplica(primary);
    onPrimary = await startTestExporter({ url: primary.url, 'health-interval': String(intervalMs) });
    onReplica = await startTestExporter({ url: replica.url, 'health-interval': String(intervalMs) });
  });

  after(async () => {
    await onPrimary?.close();
    await onReplica?.close();
    await replica?.stop();
    await primary?.stop();
  });

  const stateOf = (exporter: typeof onPrimary) => async () => (await get(`${exporter.url}/up`)).body;

  it('primary: 200 on up, 200 on primary and aliases, 404 on replica and aliases', async () => {
    assert.equal(await eventually(stateOf(onPrimary), (s) => s === 'primary', 5_000), 'primary');
    expectAll(await statuses(onPrimary.url, upPaths), 200, 'primary');
    expectAll(await statuses(onPrimary.url, primaryPaths), 200, 'primary');
    expectAll(await statuses(onPrimary.url, replicaPaths), 404, 'primary');
  });

  it('streaming replica: 404 on primary and aliases, 200 on replica and aliases, 200 on up', async () => {
    assert.equal(await eventually(stateOf(onReplica), (s) => s === 'replica', 5_000), 'replica');
    expectAll(await statuses(onReplica.url, primaryPaths), 404, 'replica');
    expectAll(await statuses(onReplica.url, replicaPaths), 200, 'replica');
    expectAll(await statuses(onReplica.url, upPaths), 200, 'replica');
  });

  it('a health request never probes: it reads the cached state', async () => {
    const probes: number[] = [];
    const original = onPrimary.health.probeOnce.bind(onPrimary.health);
    onPrimary.health.probeOnce = async () => {
      probes.push(Date.now());
      return original();
    };
    try {
      const before = probes.length;
      await Promise.all(Array.from({ length: 20 }, () => get(`${onPrimary.url}/primary`)));
      assert.ok(probes.length - before <= 1, `20 requests caused ${probes.length - before} probes`);
    } finally {
      onPrimary.health.probeOnce = original;
    }
  });

  it('starting (SQLSTATE 57P03: standby without hot_standby) gives 503 everywhere', async () => {
    await replica.restartWith({ hot_standby: 'off' });
    const state = await eventually(stateOf(onReplica), (s) => s === 'starting', 5_000);
    assert.equal(state, 'starting');
    expectAll(await statuses(onReplica.url, [...upPaths, ...primaryPaths, ...replicaPaths]), 503, 'starting');
    await replica.restartWith({ hot_standby: 'on' });
    assert.equal(await eventually(stateOf(onReplica), (s) => s === 'replica', 5_000), 'replica');
  });

  it('server stopped: 503 on every health path within two probe intervals, pg_up 0; back to primary after a restart', async () => {
    await primary.stopServer();
    const stoppedAt = Date.now();
    const state = await eventually(stateOf(onPrimary), (s) => s === 'down', 2 * intervalMs);
    const elapsed = Date.now() - stoppedAt;
    assert.equal(state, 'down', `still ${state} ${elapsed} ms after the stop`);
    expectAll(await statuses(onPrimary.url, [...upPaths, ...primaryPaths, ...replicaPaths]), 503, 'down');
    const metrics = parseMetrics((await get(`${onPrimary.url}/metrics`)).body);
    assert.equal(valueOf(metrics, 'pg_up'), 0);
    assert.equal(valueOf(metrics, 'pg_exporter_last_scrape_error'), 1);
    await primary.start();
    assert.equal(await eventually(stateOf(onPrimary), (s) => s === 'primary', 10_000), 'primary');
    const again = parseMetrics((await get(`${onPrimary.url}/metrics`)).body);
    assert.equal(valueOf(again, 'pg_up'), 1);
  });
});
