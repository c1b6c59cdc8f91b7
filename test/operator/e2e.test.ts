import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadKubeConfig } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/log.js';
import { Ports } from '../../lib/ports.js';
import { startLocalStack, type LocalStack } from '../../local/cluster/stack.js';
import { group, plural, version } from '../../operator/api/types.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { eventually } from './support.js';

/**
 * End to end on the stand-in with real PostgreSQL: the local node runs each pod's ha-node and
 * exporter as processes, the service proxy gives demo-rw/demo-ro addresses, and the operator
 * drives it all. Timings are shortened (ttl 10 s) so the suite stays within its budget.
 */
const ns = 'default';
const run = promisify(execFile);
const logger = createLogger({ name: 'e2e', level: process.env.LOG_LEVEL ?? 'silent' });

interface ClusterStatus {
  phase?: string;
  currentPrimary?: string;
  readyInstances?: number;
  members?: Array<{ name: string; role: string; ready: boolean }>;
}

describe('DatabaseCluster end to end (stand-in, local node, real PostgreSQL)', { timeout: 240_000 }, () => {
  let dir: string;
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let password: string;

  const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', stack.kubeconfigPath, '--cache-dir', join(dir, 'kcache'), '-n', ns, ...args], { timeout: 30_000 });
  const status = async () => ((await api.readCluster(ns, 'demo'))?.status ?? {}) as ClusterStatus;
  const serviceAddress = async (name: string) => {
    const service = await api.core.readNamespacedService({ namespace: ns, name });
    return service.spec?.clusterIP && service.spec.clusterIP !== 'None' ? service.spec.clusterIP : undefined;
  };
  const query = async (service: string, sql: string, params: unknown[] = []) => {
    const host = await eventually(`${service} address`, () => serviceAddress(service));
    const client = new pg.Client({ host, port: Ports.postgres, user: 'postgres', password, database: 'postgres', connectionTimeoutMillis: 3_000 });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  };
  const healthyWith = (instances: number) =>
    eventually(`Healthy with ${instances} instances`, async () => {
      const s = await status();
      const roles = s.members?.map((m) => m.role) ?? [];
      return s.phase === 'Healthy' && s.readyInstances === instances && roles.filter((r) => r === 'primary').length === 1 && roles.filter((r) => r === 'replica').length === instances - 1 ? s : undefined;
    }, 90_000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-e2e-'));
    chmodSync(dir, 0o755); // the database processes run as the postgres account and must reach their folders
    stack = await startLocalStack({ dir, logger, operatorVersion: '0.1.0', ipPrefix: '127.0.41' });
    api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
  });

  after(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('apply → Ready with one primary and two streaming replicas', async () => {
    await api.custom.createNamespacedCustomObject({
      group, version, namespace: ns, plural,
      body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name: 'demo' }, spec: { instances: 3, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 } } },
    });
    const s = await healthyWith(3);
    assert.equal(s.members?.length, 3);
    const secret = await api.core.readNamespacedSecret({ namespace: ns, name: 'demo-superuser' });
    password = Buffer.from(secret.data!.password!, 'base64').toString('utf8');
    const replicas = await eventually('two streaming replicas', async () => {
      const rows = await query('demo-rw', "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'");
      return rows.length === 2 ? rows : undefined;
    }, 30_000);
    assert.equal(replicas.length, 2);
  });

  it('writes through demo-rw and reads them back from demo-ro', async () => {
    await query('demo-rw', 'CREATE TABLE IF NOT EXISTS e2e (id int PRIMARY KEY, note text)');
    await query('demo-rw', "INSERT INTO e2e VALUES (1, 'before failover')");
    const [role] = await query('demo-ro', 'SELECT pg_is_in_recovery() AS standby');
    assert.equal(role?.standby, true, 'demo-ro reaches a replica');
    await eventually('row replicated', async () => (await query('demo-ro', 'SELECT note FROM e2e WHERE id = 1'))[0]?.note === 'before failover', 15_000);
  });

  it('scales 3 → 5 → 2 with kubectl scale; new replicas stream, the primary stays', async () => {
    const primary = (await status()).currentPrimary!;
    await kubectl('scale', 'dbc/demo', '--replicas=5');
    await healthyWith(5);
    await eventually('four streaming replicas', async () => (await query('demo-rw', "SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 4, 30_000);
    await kubectl('scale', 'dbc/demo', '--replicas=2');
    const s = await healthyWith(2);
    assert.equal(s.currentPrimary, primary, 'scale-down kept the primary');
    assert.deepEqual(s.members?.map((m) => m.name), ['demo-0', 'demo-1']);
    assert.equal((await query('demo-ro', 'SELECT note FROM e2e WHERE id = 1'))[0]?.note, 'before failover');
  });

  it('declarative switchover via spec.switchover.targetInstance, reported in status and an Event', async () => {
    const before = (await status()).currentPrimary!;
    const target = before === 'demo-0' ? 'demo-1' : 'demo-0';
    await api.custom.patchNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'demo', body: [{ op: 'add', path: '/spec/switchover', value: { targetInstance: target } }] });
    const done = await eventually('switchover Succeeded', async () => {
      const c = await api.readCluster(ns, 'demo');
      const sw = (c?.status as { switchover?: { targetInstance: string; result: string } } | undefined)?.switchover;
      return sw?.result === 'Succeeded' ? c : undefined;
    }, 60_000);
    assert.equal((done.status as ClusterStatus).currentPrimary, target);
    const events = await api.core.listNamespacedEvent({ namespace: ns });
    assert.ok(events.items.some((e) => e.reason === 'SwitchoverSucceeded' && e.involvedObject.name === 'demo'));
    const [row] = await eventually('demo-rw on the new primary', async () => {
      const rows = await query('demo-rw', 'SELECT inet_server_addr()::text AS addr, pg_is_in_recovery() AS standby');
      return rows[0]?.standby === false ? rows : undefined;
    }, 30_000);
    assert.equal(row?.standby, false);
    await healthyWith(2);
  });

  it('a parameter change that needs a restart rolls through ha-node without losing committed writes', async () => {
    await query('demo-rw', "INSERT INTO e2e VALUES (10, 'before restart')");
    await kubectl('patch', 'dbc/demo', '--type=merge', '-p', JSON.stringify({ spec: { postgresql: { parameters: { max_connections: '120' } } } }));
    const hosts = async () => (await api.core.listNamespacedPod({ namespace: ns, labelSelector: 'keelson.io/cluster=demo' })).items.map((p) => p.status!.podIP!);
    await eventually('max_connections 120 on every instance', async () => {
      for (const host of await hosts()) {
        const client = new pg.Client({ host, port: Ports.postgres, user: 'postgres', password, database: 'postgres', connectionTimeoutMillis: 2_000 });
        try {
          await client.connect();
          const { rows } = await client.query('SHOW max_connections');
          if (rows[0]?.max_connections !== '120') return false;
        } finally {
          await client.end().catch(() => undefined);
        }
      }
      return true;
    }, 90_000);
    const events = (await api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.involvedObject.name === 'demo');
    assert.ok(events.some((e) => e.reason === 'ConfigurationApplied'), 'the operator sent the change to ha-node /config');
    assert.ok(events.some((e) => e.reason === 'Restarted' && /pending parameter change/.test(e.message ?? '')), 'the operator rolled the restart');
    const rows = await eventually('demo-rw answers after the restarts', () => query('demo-rw', 'SELECT id FROM e2e ORDER BY id'), 60_000);
    assert.deepEqual(rows.map((r) => r.id), [1, 10], 'committed rows survived the rolling restart');
    await healthyWith(2);
  });

  it('deleting the primary pod elects a new primary; status and demo-rw follow', async () => {
    const old = (await status()).currentPrimary!;
    await api.core.deleteNamespacedPod({ namespace: ns, name: old });
    const next = await eventually('a new primary', async () => {
      const s = await status();
      return s.currentPrimary && s.currentPrimary !== old ? s.currentPrimary : undefined;
    }, 45_000);
    assert.notEqual(next, old);
    await eventually('write through demo-rw after failover', async () => {
      await query('demo-rw', "INSERT INTO e2e VALUES (2, 'after failover') ON CONFLICT (id) DO NOTHING");
      return true;
    }, 30_000);
    const rows = await query('demo-rw', 'SELECT id FROM e2e ORDER BY id');
    assert.deepEqual(rows.map((r) => r.id), [1, 2, 10], 'the committed rows survived the failover');
    await healthyWith(2);
  });

  it('deletion leaves no Leases behind', async () => {
    const before = (await api.listLeases(ns)).filter((l) => l.metadata?.labels?.['keelson.io/cluster'] === 'demo');
    assert.ok(before.length > 0, 'ha-node keeps its DCS in labelled Leases');
    await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'demo' });
    await eventually('cluster gone', async () => (await api.readCluster(ns, 'demo')) === undefined, 30_000);
    await eventually('no demo Leases', async () => {
      const left = (await api.listLeases(ns)).filter((l) => l.metadata?.name?.startsWith('demo-'));
      return left.length === 0;
    }, 30_000);
  });
});
