import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../../../lib/http.js';
import type { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import type { ServerStatus } from '../../../../sidecar/ha-node/postgres/status.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { call, dcsFor, serveOpsApp, snapshotFor } from '../ops/support.js';

const primaryStatus: ServerStatus = {
  inRecovery: false,
  postmasterStartTime: '2026-11-29 05:00:00.000000+00:00',
  serverVersion: 150018,
  timeline: 1,
  systemIdentifier: '7711',
  location: 5000,
  replayedTimestamp: null,
  paused: false,
  replication: [],
  synchronousStandbyNames: '',
};

/** Paths as Patroni dispatches them: the node document at /patroni too, letter case significant. */
describe('ha-node routes as Patroni dispatches them', () => {
  let api: TestApiServer;
  let dcs: LeaseDcs;
  let server: RunningServer;
  let base: string;

  before(async () => {
    api = await startTestApiServer();
    dcs = dcsFor(api, 'routes', 'a');
    ({ server } = await serveOpsApp(dcs, snapshotFor('a', 'routes', dcs, { isLeader: true, status: primaryStatus }), { credentials: null }));
    base = server.url.replace(/\/$/, '');
  });

  after(async () => {
    await server?.close();
    dcs?.stop();
    await api?.close();
  });

  it('GET /patroni answers 200 with the node document, as GET /ha does', async () => {
    const patroni = await call(base, 'GET', '/patroni');
    assert.equal(patroni.status, 200);
    const doc = JSON.parse(patroni.text) as Record<string, unknown>;
    assert.equal(doc.role, 'primary');
    assert.deepEqual(Object.keys(doc), Object.keys(JSON.parse((await call(base, 'GET', '/ha')).text) as object));
    assert.equal((await call(base, 'OPTIONS', '/patroni')).status, 200);
  });

  it('letter case counts: /PRIMARY is no health check of the primary', async () => {
    assert.equal((await call(base, 'GET', '/primary')).status, 200);
    for (const path of ['/PRIMARY', '/Primary', '/PATRONI', '/Liveness']) assert.equal((await call(base, 'GET', path)).status, 503, path);
    assert.equal((await call(base, 'PATCH', '/CONFIG', { ttl: 30 })).status, 501);
  });
});
