import assert from 'node:assert/strict';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import type { LocalStack } from '../../local/cluster/stack.js';
import { parse } from 'yaml';
import pg from 'pg';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { ConfigKeys } from '../../api/naming.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually } from './support.js';

/**
 * Two DatabaseClusters in one namespace on the stand-in with real PostgreSQL: `src` and `stb`, a
 * standby cluster of it (spec.replica). stb's first instance is cloned from src, its leader
 * follows src through the src-rw Service, rows written on src appear on stb, and
 * `replica.enabled: false` promotes it (status, Event, new timeline, same data). Sources that do
 * not exist, a cycle of standbys and missing credentials are refused with a condition and an Event.
 */
const ns = 'default';
const run = promisify(execFile);
const logger = createLogger({ name: 'standby-e2e', level: process.env.LOG_LEVEL ?? 'silent' });
const ha = { ttl: 10, loopWait: 2, retryTimeout: 4 };

interface ReplicaStatus {
  role?: string;
  source?: string;
  step?: string;
  promotedAt?: string;
}

describe('standby DatabaseCluster end to end (stand-in, local node, real PostgreSQL)', { timeout: 400_000 }, () => {
  let dir: string;
  let e2e: E2eStack;
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let src: ClusterDriver;
  let stb: ClusterDriver;

  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', stack.kubeconfigPath, '--cache-dir', join(dir, 'kcache'), '-n', ns, ...args], { timeout: 30_000 });
  const replicaStatus = async (driver: ClusterDriver) => ((await driver.status()) as { replica?: ReplicaStatus }).replica;
  const notes = async (driver: ClusterDriver, service: string) =>
    (await driver.query(service, 'SELECT id, note FROM items ORDER BY id')).map((r) => [r.id, r.note]);

  before(async () => {
    e2e = await startE2eStack('standby', { logger, ipPrefix: '127.0.57' });
    ({ dir, stack, api } = e2e);
    src = clusterDriver(api, ns, 'src', viaClusterIp);
    stb = clusterDriver(api, ns, 'stb', viaClusterIp);
  });

  after(async () => {
    await e2e?.close();
  });

  it('a standby cluster of a DatabaseCluster is cloned from it and follows it', async () => {
    await src.create({ instances: 1, ha });
    await src.healthyWith(1, 120_000);
    await src.readPassword();
    await src.query('src-rw', 'CREATE TABLE items (id int PRIMARY KEY, note text)');
    await src.query('src-rw', "INSERT INTO items VALUES (1, 'before the standby')");

    await stb.create({ instances: 2, ha, replica: { source: { cluster: 'src' } } });
    const status = await stb.healthyWith(2, 180_000);
    assert.equal(status.members?.length, 2);
    await stb.readPassword(); // a copy of src's superuser Secret: the cloned data directory carries its password
    const replica = await replicaStatus(stb);
    assert.deepEqual([replica?.role, replica?.source, replica?.step], ['standby', 'default/src', 'Following']);
    const [role] = await stb.query('stb-rw', 'SELECT pg_is_in_recovery() AS standby');
    assert.equal(role?.standby, true, 'stb-rw reaches the standby leader, read-only');
    await src.query('src-rw', "INSERT INTO items VALUES (2, 'after the standby')");
    await eventually(
      'rows from src on the standby leader',
      async () => JSON.stringify(await notes(stb, 'stb-rw')) === JSON.stringify(await notes(src, 'src-rw')),
      60_000,
    );
    await eventually('rows from src on the cascading replica', async () => (await notes(stb, 'stb-ro')).length === 2, 60_000);
    const [sender] = await src.query('src-rw', "SELECT count(*)::int AS n FROM pg_stat_replication WHERE application_name LIKE 'stb-%'");
    assert.equal(sender?.n, 1, 'only the standby leader streams from src; the other stb member cascades');
    // src takes replication by certificate only: the standby leader presents src's replication certificate over TLS.
    const [tls] = await src.query(
      'src-rw',
      "SELECT s.ssl, s.client_dn FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid) WHERE r.application_name LIKE 'stb-%'",
    );
    assert.equal(tls?.ssl, true);
    assert.match(String(tls?.client_dn), /CN=replicator$/, "the certificate src's client CA signed for its replication role");
    // A session without TLS is refused from any address (pg_hba's hostnossl rejects).
    const srcRwAddress = (await api.core.readNamespacedService({ namespace: ns, name: 'src-rw' })).spec!.clusterIP!;
    const plain = new pg.Client({ host: srcRwAddress, port: 5432, user: 'postgres', password: 'unused', database: 'postgres', ssl: false });
    plain.on('error', () => undefined);
    await assert.rejects(plain.connect(), /pg_hba\.conf rejects connection .* no encryption/);
    // The settings document carries bootstrapConfig as a map (api/ha-node/settings-document.ts).
    const settings = parse((await api.core.readNamespacedConfigMap({ namespace: ns, name: 'stb-config' })).data![ConfigKeys.haNode]!) as {
      bootstrapConfig: { standby_cluster?: { host: string; port: number; server_name?: string } };
    };
    const config = settings.bootstrapConfig;
    assert.deepEqual(
      config.standby_cluster,
      { host: srcRwAddress, port: 5432, server_name: 'src-rw.default.svc' },
      'the source reaches ha-node through the bootstrap configuration, with the name its certificate carries',
    );
  });

  it('refuses a source that does not exist, a cycle of standbys and missing credentials, with a condition and an Event', async () => {
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['orphan', { cluster: 'nowhere' }, /replica\.source: DatabaseCluster default\/nowhere does not exist/],
      ['byhost', { host: '127.0.0.99', credentialsSecret: 'missing-secret' }, /Secret default\/missing-secret does not exist/],
      ['cyc-a', { cluster: 'cyc-b' }, /default\/cyc-a → default\/cyc-b → default\/cyc-a is a cycle/],
      ['cyc-b', { cluster: 'cyc-a' }, /default\/cyc-b → default\/cyc-a → default\/cyc-b is a cycle/],
    ];
    for (const [name, source] of refusals) await clusterDriver(api, ns, name, viaClusterIp).create({ instances: 1, ha, replica: { source } });
    for (const [name, , message] of refusals) {
      const driver = clusterDriver(api, ns, name, viaClusterIp);
      const applied = await eventually(
        `${name} refused`,
        async () => {
          const condition = (await driver.status()).conditions?.find((c) => c.type === 'Applied');
          return condition?.status === 'False' && message.test(condition.message) ? condition : undefined;
        },
        60_000,
      );
      assert.equal(applied.reason, 'Refused');
      assert.ok(
        (await driver.events()).some((e) => e.reason === 'ApplyRefused' && message.test(e.message ?? '')),
        `an ApplyRefused Event for ${name}`,
      );
      assert.deepEqual(await driver.pods(), [], `${name} starts no pod that would initdb a cluster of its own`);
    }
    const removed = await kubectl('patch', 'dbc/stb', '--type=merge', '-p', JSON.stringify({ spec: { replica: null } })).then(
      () => undefined,
      (error: { stderr?: string }) => error.stderr ?? String(error),
    );
    assert.match(removed ?? 'accepted', /replica cannot be removed/, 'a standby cluster promotes by replica.enabled: false, not by dropping replica');
  });

  it('replica.enabled: false promotes the standby cluster: Event, status, new timeline, same data', async () => {
    const [before] = await stb.query('stb-rw', 'SELECT timeline_id AS t FROM pg_control_checkpoint()');
    const expected = await notes(src, 'src-rw');
    await kubectl('patch', 'dbc/stb', '--type=merge', '-p', JSON.stringify({ spec: { replica: { enabled: false } } }));
    const promoted = await eventually(
      'status.replica.role primary',
      async () => {
        const replica = await replicaStatus(stb);
        return replica?.role === 'primary' ? replica : undefined;
      },
      90_000,
    );
    assert.ok(promoted.promotedAt, 'the promotion time is recorded');
    assert.ok(
      (await stb.events()).some((e) => e.reason === 'Promoted'),
      'a Promoted Event',
    );
    const [after] = await eventually(
      'stb-rw writable on a new timeline',
      async () => {
        const rows = await stb.query('stb-rw', 'SELECT pg_is_in_recovery() AS standby, timeline_id AS t FROM pg_control_checkpoint()');
        return rows[0]?.standby === false && Number(rows[0]?.t) > Number(before?.t) ? rows : undefined;
      },
      60_000,
    );
    assert.equal(after?.standby, false);
    assert.deepEqual(await notes(stb, 'stb-rw'), expected, "the promoted cluster holds exactly the source's rows");
    await stb.query('stb-rw', "INSERT INTO items VALUES (3, 'on the promoted cluster')");
    await eventually("the write on stb's replica", async () => (await notes(stb, 'stb-ro')).length === 3, 60_000);
    assert.equal((await notes(src, 'src-rw')).length, 2, "src does not see the promoted cluster's writes");
    await stb.healthyWith(2);
  });
});
