import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import { LeaseDcs } from '../../../sidecar/ha-node/dcs/lease-dcs.js';
import type { DynamicConfig } from '../../../sidecar/ha-node/dcs/types.js';
import { runCtl } from '../../ctl/ctl-runner.js';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * Parameter values PostgreSQL cannot load never reach postgresql.conf: PATCH /config refuses
 * them against the server's pg_settings, and a member screens what reaches the DCS another way,
 * keeps the last good value, reports the refusal and goes on applying valid changes. Health
 * checks follow the postmaster at request time, not the loop's last look.
 */
const quiet = createLogger({ name: 'parameters-test', level: 'silent' });

async function patchConfig(member: Member, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${member.apiUrl}/config`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, text: await response.text() };
}

async function show(member: Member, name: string): Promise<string | undefined> {
  return (await member.query<{ v: string }>('SELECT current_setting($1) AS v', [name]))[0]?.v;
}

describe('parameter values PostgreSQL cannot load', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;
  let replica: Member;
  let dcs: LeaseDcs;

  before(async () => {
    // A long loop_wait: nothing here may depend on the loop's next turn (config writes wake it).
    cluster = await startCluster({ members: 2, ttl: 30, loopWait: 10, retryTimeout: 10, scope: 'params' });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    replica = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor('the replica streams', async () => (await replica.status('/replica')) === 200, 120_000);
    dcs = new LeaseDcs({
      kubeConfig: cluster.kubeConfig,
      namespace: 'default',
      scope: 'params',
      name: 'test-writer',
      ttl: () => 30,
      requestTimeoutMs: () => 5000,
      logger: quiet,
    });
  });

  after(async () => {
    dcs?.stop();
    await cluster?.stop();
  });

  it('PATCH /config refuses each value with a 400 naming the parameter and the reason, and stores nothing', async () => {
    const before = await primary.get('/config');
    const refused: [string, RegExp][] = [
      ['{"db":{"parameters":{"work_mem":1e+300}}}', /"db\.parameters\.work_mem" must be written without an exponent/],
      ['{"db":{"parameters":{"work_mem":"1e+300"}}}', /"db\.parameters\.work_mem" exceeds the integer range/],
      [JSON.stringify({ db: { parameters: { application_name: 'a\nb' } } }), /"db\.parameters\.application_name" must not contain control characters/],
      ['{"db":{"parameters":{"work_mem":"lots"}}}', /"db\.parameters\.work_mem" is not an integer or a size with a unit such as "64MB" \(got "lots"\)/],
      ['{"db":{"parameters":{"work_mem":"64mb"}}}', /"db\.parameters\.work_mem" has an invalid unit "mb"/],
      ['{"db":{"parameters":{"synchronous_commit":"maybe"}}}', /"db\.parameters\.synchronous_commit" must be one of local, remote_write/],
      ['{"db":{"parameters":{"no_such_parameter":"1"}}}', /"db\.parameters\.no_such_parameter" is not a parameter this PostgreSQL server knows/],
    ];
    for (const [body, message] of refused) {
      const reply = await patchConfig(primary, body);
      assert.equal(reply.status, 400, `${body}: ${reply.text}`);
      assert.match(reply.text, message);
    }
    assert.equal((await primary.get('/config')).body, before.body, 'nothing was written');
  });

  it('a valid change after the refused ones applies on every member', async () => {
    const reply = await patchConfig(primary, { db: { parameters: { work_mem: '16MB' } } });
    assert.equal(reply.status, 200, reply.text);
    await cluster.waitFor('work_mem 16MB everywhere', async () => (await show(primary, 'work_mem')) === '16MB' && (await show(replica, 'work_mem')) === '16MB');
  });

  it('a bad value that reaches the DCS another way is kept out of postgresql.conf, reported, and blocks nothing', async () => {
    const current = await dcs.getCluster();
    const config = current.config!;
    const parameters = { ...config.db?.parameters, work_mem: 'lots', application_name: 'a\nb' };
    const bad: DynamicConfig = { ...config, db: { ...config.db, parameters } };
    assert.equal(await dcs.setConfig(bad, { expectedVersion: current.configVersion ?? '' }), true);
    for (const member of [primary, replica]) {
      const errors = await cluster.waitFor(`${member.name} reports the refused values`, async () => {
        const doc = (await member.get('/ha')).json();
        const list = (doc.config_errors ?? []) as { parameter?: string; source: string; error: string }[];
        return list.length === 2 ? list : undefined;
      });
      assert.deepEqual(
        errors.map((e) => [e.parameter, e.source]),
        [
          ['work_mem', 'ha-node'],
          ['application_name', 'ha-node'],
        ],
      );
      assert.match(errors[0]!.error, /work_mem = "lots" is not an integer/);
      const conf = readFileSync(join(member.dataDir, 'postgresql.conf'), 'utf8');
      assert.match(conf, /^work_mem = '16MB'$/m, 'the last good value stays');
      assert.doesNotMatch(conf, /'lots'|^application_name/m);
    }
    // The member records carry them too: GET /cluster and `keelson ctl list` show them.
    await cluster.waitFor('GET /cluster lists the refusals of both members', async () => {
      const members = (await primary.get('/cluster')).json().members as { name: string; config_errors?: unknown[] }[];
      return members.length === 2 && members.every((m) => m.config_errors?.length === 2);
    });
    const listed = await runCtl(['--url', primary.apiUrl, 'list']);
    assert.match(listed.stdout, new RegExp(`Parameter not applied on ${replica.name} \\(ha-node\\): work_mem = "lots" is not an integer`));
    // A later valid change to another parameter is accepted and applied while the bad ones are stored.
    const reply = await patchConfig(primary, { db: { parameters: { statement_timeout: '5s' } } });
    assert.equal(reply.status, 200, reply.text);
    await cluster.waitFor(
      'statement_timeout 5s everywhere',
      async () => (await show(primary, 'statement_timeout')) === '5s' && (await show(replica, 'statement_timeout')) === '5s',
    );
    assert.equal(await show(replica, 'work_mem'), '16MB');
    // A restart still starts the server, and the errors clear once the values are fixed.
    const restart = await fetch(`${replica.apiUrl}/restart`, {
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
      signal: AbortSignal.timeout(90_000),
    });
    assert.equal(restart.status, 200, await restart.text());
    await cluster.waitFor('the replica streams again', async () => (await replica.status('/replica')) === 200, 90_000);
    // So does a member whose ha-node starts with its server down (a pod restart): it screens with the pg_settings it saved.
    await replica.stop();
    assert.equal(replica.postmasterPid(), undefined, 'the server stopped with ha-node');
    replica.start();
    await cluster.waitFor('the restarted member streams', async () => (await replica.status('/replica')) === 200, 120_000);
    assert.equal(await show(replica, 'work_mem'), '16MB');
    assert.equal((await patchConfig(primary, { db: { parameters: { work_mem: '32MB', application_name: null } } })).status, 200);
    await cluster.waitFor(
      'errors cleared and work_mem 32MB',
      async () => (await replica.get('/ha')).json().config_errors === undefined && (await show(replica, 'work_mem')) === '32MB',
    );
  });

  it('/primary and /readiness answer 503 as soon as the primary postmaster is gone, before the loop notices', async () => {
    assert.equal(await primary.status('/primary'), 200);
    assert.equal(await primary.status('/readiness'), 200);
    const published = async () => (await dcs.getCluster()).members.find((m) => m.name === primary.name);
    const renewed = async () => (await cluster.leases()).find((l) => l.metadata?.name === 'params-leader')?.spec?.renewTime;
    const renewedAt = async () => JSON.stringify(await renewed());
    // Right after the loop renewed the lock in its steady rhythm, its next turn is loop_wait (10 s)
    // away. The earlier cases change the configuration, which makes the loop look again sooner for
    // a while: wait until two renewals come a whole loop_wait apart, then kill at the second.
    let seen = await renewedAt();
    let seenAt = 0;
    await cluster.waitFor(
      'two renewals a loop_wait apart',
      async () => {
        const now = await renewedAt();
        if (now === seen) return false;
        const steady = seenAt > 0 && Date.now() - seenAt >= 8_000;
        seen = now;
        seenAt = Date.now();
        return steady;
      },
      90_000,
    );
    const pid = primary.postmasterPid()!;
    process.kill(pid, 'SIGKILL');
    await cluster.waitFor(
      '/primary and /readiness 503',
      async () => (await Promise.all([primary.status('/primary'), primary.status('/readiness')])).every((code) => code === 503),
      30_000,
    );
    assert.equal((await published())?.state, 'running', 'the loop has not had its turn yet: the endpoints did not wait for it');
    const doc = (await primary.get('/primary')).json();
    assert.equal(doc.state, 'crashed');
    // The loop restarts the server in place and the endpoints follow it back.
    await cluster.waitFor('/primary 200 again', async () => (await cluster.primary()) !== undefined, 120_000);
  });
});
