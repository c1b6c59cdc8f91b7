import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serve, type RunningServer } from '../../../../lib/http.js';
import { createHaNodeApp } from '../../../../sidecar/ha-node/api/app.js';
import type { ClusterView } from '../../../../sidecar/ha-node/dcs/types.js';
import { confirmFailsafe } from '../../../../sidecar/ha-node/ha/duties/failsafe-client.js';
import { HaLoop } from '../../../../sidecar/ha-node/ha/loop.js';
import { defaultConfig } from '../../../../sidecar/ha-node/ha/settings.js';
import { authorizationHeader, type ApiCredentials } from '../../../../api/ha-node/credentials.js';
import { PostgresInstance } from '../../../../sidecar/ha-node/postgres/instance.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { call, dcsFor, quiet } from '../ops/support.js';

const scope = 'failsafe';
const credentials: ApiCredentials = { username: 'keelson', password: 'member-secret' };
const memberAuth = { Authorization: authorizationHeader(credentials)! };
const confirmation = { name: 'leader-0', conn_url: 'postgres://127.0.0.1:5432/postgres', api_url: 'http://127.0.0.1:1/ha' };

/**
 * POST /failsafe holds off a replica's race for the lock, so only members (who hold the API
 * credentials) may send it, and only while failsafe mode is on (Patroni: 502 otherwise). Served by
 * a real HA loop object that is not running: its answer and state are what the route changes.
 */
describe('POST /failsafe', () => {
  let api: TestApiServer;
  let dir: string;
  const servers: RunningServer[] = [];
  let on: string;
  let off: string;

  async function member(name: string, failsafeMode: boolean): Promise<string> {
    const dcs = dcsFor(api, scope, name);
    const dataDir = join(dir, name, 'pgdata');
    const pg = new PostgresInstance(
      {
        name,
        scope,
        dataDir,
        binDir: '/usr/lib/postgresql/15/bin',
        listenAddress: '127.0.0.1',
        connectHost: '127.0.0.1',
        port: 5432,
        socketDir: dir,
        superuser: { username: 'postgres', password: 'x' },
        replication: { username: 'replicator', password: 'x' },
        parameters: {},
      },
      quiet,
    );
    const loop = new HaLoop(
      { name, scope, version: 'test', apiUrl: 'http://127.0.0.1:1/ha', tags: {}, baseConfig: { ...defaultConfig, failsafe_mode: failsafeMode }, logger: quiet },
      dcs,
      pg,
    );
    const app = createHaNodeApp({ snapshot: () => loop.snapshot(), dcs, logger: quiet, wake: () => undefined, loop, pg, credentials });
    const server = await serve(app, { host: '127.0.0.1', port: 0, logger: quiet, shutdownTimeoutMs: 500 });
    servers.push(server);
    return server.url.replace(/\/$/, '');
  }

  const failsafeActive = async (base: string): Promise<unknown> =>
    (JSON.parse((await call(base, 'GET', '/ha')).text) as Record<string, unknown>).failsafe_mode_is_active;

  before(async () => {
    api = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-failsafe-'));
    on = await member('replica-on', true);
    off = await member('replica-off', false);
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a caller without the members' credentials, and the refusal changes nothing", async () => {
    const anonymous = await call(on, 'POST', '/failsafe', confirmation);
    assert.equal(anonymous.status, 401, anonymous.text);
    const wrong = await call(on, 'POST', '/failsafe', confirmation, { Authorization: authorizationHeader({ username: 'keelson', password: 'guess' })! });
    assert.equal(wrong.status, 401);
    assert.equal(await failsafeActive(on), undefined, 'no failsafe contact was recorded');
  });

  it('answers 502 while failsafe mode is off, even with credentials', async () => {
    const r = await call(off, 'POST', '/failsafe', confirmation, memberAuth);
    assert.deepEqual([r.status, r.text], [502, 'Failsafe mode is not enabled']);
    assert.equal(await failsafeActive(off), undefined);
  });

  it('routes on the exact path, as Patroni: /FAILSAFE is no route (501), GET /HA is an unknown health check (503)', async () => {
    const upper = await call(on, 'POST', '/FAILSAFE', confirmation, memberAuth);
    assert.deepEqual([upper.status, upper.text], [501, 'Unsupported method']);
    assert.equal(await failsafeActive(on), undefined, 'nothing was recorded');
    assert.equal((await call(on, 'GET', '/HA')).status, 503);
    assert.equal((await call(on, 'GET', '/ha')).status, 200);
  });

  it('answers 400/413 (not 500) to a null, non-object or oversized body', async () => {
    for (const [body, code] of [
      ['null', 400],
      ['[1]', 400],
      ['{"name":', 400],
      [JSON.stringify({ name: 'x'.repeat(100 * 1024) }), 413],
    ] as const) {
      const r = await call(on, 'POST', '/failsafe', body, memberAuth).catch((error: Error) => ({ status: -1, text: error.message }));
      assert.equal(r.status, code, `${body.slice(0, 20)}: ${r.text}`);
    }
    assert.equal(await failsafeActive(on), undefined, 'no refused body recorded a contact');
  });

  it("accepts a member's confirmation, and the leader-side client sends the credentials", async () => {
    const cluster: ClusterView = {
      history: [],
      members: [],
      leaderRecord: { holder: 'leader-0', ttl: 30, transitions: 0, failsafe: { 'leader-0': 'http://127.0.0.1:1/ha', 'replica-on': `${on}/ha` } },
    };
    assert.equal(await confirmFailsafe(cluster, confirmation, { timeoutMs: 2000 }), false, 'without credentials the member refuses');
    assert.equal(await failsafeActive(on), undefined);
    assert.equal(await confirmFailsafe(cluster, confirmation, { authorization: memberAuth.Authorization, timeoutMs: 2000 }), true);
    assert.equal(await failsafeActive(on), true, 'the replica now knows the leader is alive');
  });
});
