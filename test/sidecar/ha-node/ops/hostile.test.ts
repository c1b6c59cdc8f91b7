import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../../../lib/http.js';
import type { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { call, dcsFor, memberRecord, serveOpsApp, snapshotFor } from './support.js';

const scope = 'hostile';
const auth = { Authorization: 'Bearer tok-hostile' };
const initialConfig = {
  ttl: 60,
  loop_wait: 1,
  retry_timeout: 3,
  maximum_lag_on_failover: 1048576,
  db: { use_slots: true, parameters: { max_connections: 40 } },
};
const nested = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

/**
 * Requests an attacker or a careless script sends to the authenticated endpoints: each is refused
 * with 400/413 naming what is wrong, nothing is stored, and the process stays healthy (its
 * Object.prototype clean, its member Lease still written).
 */
describe('ha-node operations API under hostile input', () => {
  let api: TestApiServer;
  let dcs: LeaseDcs;
  let reader: LeaseDcs;
  let server: RunningServer;
  let base: string;
  const stored = async (): Promise<unknown> => (await reader.getCluster()).config;

  before(async () => {
    api = await startTestApiServer();
    dcs = dcsFor(api, scope, 'a');
    reader = dcsFor(api, scope, 'reader');
    await dcs.start();
    ({ server } = await serveOpsApp(dcs, snapshotFor('a', scope, dcs), { credentials: { token: 'tok-hostile' } }));
    base = server.url.replace(/\/$/, '');
    await dcs.getCluster();
    await dcs.setConfig(initialConfig);
  });

  after(async () => {
    // Old code polluted the prototype here; do not let that leak into other test files.
    delete (Object.prototype as Record<string, unknown>).polluted;
    await server?.close();
    dcs?.stop();
    reader?.stop();
    await api?.close();
  });

  it('refuses __proto__, constructor and prototype keys in PATCH and PUT /config, and the member still writes its Lease', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['PATCH', '{"__proto__":{"polluted":1}}', /key "__proto__" is not allowed \(at the top level\)/],
      ['PUT', '{"ttl":60,"__proto__":{"polluted":1}}', /key "__proto__" is not allowed/],
      ['PATCH', '{"db":{"__proto__":{"polluted":1}}}', /key "__proto__" is not allowed \(at "db"\)/],
      ['PATCH', '{"constructor":{"prototype":{"polluted":1}}}', /key "constructor" is not allowed/],
      ['PATCH', '{"db":{"parameters":{"prototype":"x"}}}', /key "prototype" is not allowed \(at "db.parameters"\)/],
    ];
    for (const [method, body, pattern] of cases) {
      const r = await call(base, method, '/config', body, auth);
      assert.equal(r.status, 400, `${method} ${body}: ${r.text}`);
      assert.match(r.text, pattern);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched');
    assert.deepEqual(await stored(), initialConfig, 'nothing was stored');
    await dcs.touchMember(memberRecord('a', `${base}/ha`));
    const member = (await reader.getCluster()).members.find((m) => m.name === 'a');
    assert.equal(member?.api_url, `${base}/ha`, 'the member record was written after the requests');
  });

  it('bounds every timing like the CRD and the Lease (int32 leaseDurationSeconds)', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ttl: 9007199254740992 }, /"ttl" must be an integer from 5 to 3600/],
      [{ ttl: 3601 }, /"ttl" must be an integer from 5 to 3600/],
      [{ ttl: 4 }, /"ttl" must be an integer from 5 to 3600/],
      [{ loop_wait: 601 }, /"loop_wait" must be an integer from 1 to 600/],
      [{ retry_timeout: 0.5 }, /"retry_timeout" must be an integer from 1 to 600/],
      [{ primary_start_timeout: 1e12 }, /"primary_start_timeout" must be a number from 0 to 86400/],
      [{ primary_race_backoff: -1 }, /"primary_race_backoff" must be a number from 0 to 3600/],
      [{ member_slots_ttl: '99999999999d' }, /"member_slots_ttl" must be from 0 to 31536000 seconds/],
      [{ maximum_lag_on_failover: 2 ** 60 }, /"maximum_lag_on_failover" must be an integer from 0 to 9007199254740991/],
    ];
    for (const [body, pattern] of cases) {
      const r = await call(base, 'PATCH', '/config', body, auth);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.text, pattern);
    }
    assert.deepEqual(await stored(), initialConfig, 'nothing was stored');
    const ok = await call(base, 'PATCH', '/config', { ttl: 3600, member_slots_ttl: '30min' }, auth);
    assert.equal(ok.status, 200, ok.text);
    const lease = await dcs.getCluster();
    assert.equal(lease.config?.ttl, 3600);
    assert.equal((await call(base, 'PUT', '/config', initialConfig, auth)).status, 200);
  });

  it('never empties the configuration through PUT: non-finite numbers and an all-null body are refused', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"ttl":1e309}', /"ttl" is not a finite number/],
      ['{"ttl":60,"loop_wait":1,"retry_timeout":3,"ignore_slots":[-1e309]}', /"ignore_slots\[0\]" is not a finite number/],
      ['{"ttl":60,"standby_cluster":{"port":1e309}}', /"standby_cluster.port" is not a finite number/],
      ['{"ttl":null}', /PUT \/config would leave an empty configuration/],
    ];
    for (const [body, pattern] of cases) {
      const r = await call(base, 'PUT', '/config', body, auth);
      assert.equal(r.status, 400, `${body}: ${r.text}`);
      assert.match(r.text, pattern);
    }
    assert.equal((await call(base, 'PATCH', '/config', '{"loop_wait":1e309}', auth)).status, 400);
    assert.deepEqual(await stored(), initialConfig, 'the configuration is intact');
  });

  it('answers 400 (not 500) to 20,000 levels of nesting on every JSON endpoint', async () => {
    for (const [method, path] of [
      ['PATCH', '/config'],
      ['PUT', '/config'],
      ['POST', '/switchover'],
      ['POST', '/restart'],
      ['POST', '/reinitialize'],
    ] as const) {
      const r = await call(base, method, path, nested(20_000), auth);
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.match(r.text, /nested deeper than 32 levels/);
    }
    assert.deepEqual(await stored(), initialConfig);
    assert.equal((await call(base, 'GET', '/config')).status, 200, 'the server still answers');
  });

  it('type-checks POST /reinitialize like every other endpoint, naming the field', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"force":1}', /"force" must be true or false \(got 1\)/],
      ['{"from-leader":"x"}', /"from-leader" must be true or false \(got "x"\)/],
      ['{"force":"true"}', /"force" must be true or false/],
      ['"yes"', /the body must be a JSON object/],
      ['{"wipe":true}', /"wipe" is not a known option/],
    ];
    for (const [body, pattern] of cases) {
      const r = await call(base, 'POST', '/reinitialize', body, auth);
      assert.equal(r.status, 400, `${body}: ${r.text}`);
      assert.match(r.text, pattern);
    }
    // A well-typed body passes the checks and meets the node's own rules (no PostgreSQL here).
    const r = await call(base, 'POST', '/reinitialize', { force: true, 'from-leader': false }, auth);
    assert.equal(r.status, 503, r.text);
  });
});
