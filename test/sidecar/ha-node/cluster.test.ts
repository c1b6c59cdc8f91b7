import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { resolveRunAs, runToolOrThrow } from '../../../sidecar/ha-node/postgres/runner.js';
import { pgBin } from '../../support/postgres.js';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * Three real ha-node processes with real PostgreSQL 15 servers on 127.0.0.2-4 against the API
 * server stand-in: bootstrap, the read-side API per role, a PostgreSQL crash on the primary, a
 * crash of the whole primary pod with a diverged rejoin, and a clean hand-over.
 */
const ttl = 8;

describe('ha-node cluster', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;
  let replicas: Member[];

  before(async () => {
    cluster = await startCluster({
      members: 3,
      ttl,
      loopWait: 1,
      retryTimeout: 3,
      memberOptions: [{ tags: { zone: 'z0' } }, { tags: { zone: 'z1' } }, { tags: { zone: 'z2' } }],
    });
  });

  after(async () => {
    await cluster?.stop();
  });

  async function streamingReplicas(): Promise<Member[]> {
    const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
    return cluster.members.filter((_, i) => codes[i] === 200);
  }

  async function writablePrimary(candidates: Member[]): Promise<Member | undefined> {
    for (const member of candidates) if (await member.isWritable()) return member;
    return undefined;
  }

  it('bootstraps one primary and two streaming replicas with slots', async () => {
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    await cluster.waitFor('two streaming replicas', async () => (await streamingReplicas()).length === 2, 60_000);
    replicas = cluster.members.filter((m) => m !== primary);
    assert.equal(await cluster.leaderName(), primary.name);

    await primary.query('CREATE TABLE items (id int PRIMARY KEY, note text)');
    await primary.query("INSERT INTO items VALUES (1, 'bootstrap')");
    for (const replica of replicas) {
      await cluster.waitFor(
        `row on ${replica.name}`,
        async () => (await replica.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n === '1',
        20_000,
      );
      assert.equal(await replica.isWritable(), false);
    }
    const databases = await primary.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = 'app'");
    assert.equal(databases.length, 1, 'the configured database was created at bootstrap');
    const senders = await primary.query<{ application_name: string; state: string }>('SELECT application_name, state FROM pg_stat_replication ORDER BY 1');
    assert.deepEqual(
      senders.map((s) => s.application_name),
      replicas.map((r) => r.name).sort(),
    );
    assert.ok(senders.every((s) => s.state === 'streaming'));
    const slots = await cluster.waitFor(
      'active slots',
      async () => {
        const rows = await primary.query<{ slot_name: string; active: boolean }>(
          "SELECT slot_name, active FROM pg_replication_slots WHERE slot_type = 'physical' ORDER BY 1",
        );
        return rows.length === 2 && rows.every((r) => r.active) ? rows : undefined;
      },
      20_000,
    );
    assert.deepEqual(
      slots.map((s) => s.slot_name),
      replicas.map((r) => r.name.replace(/-/g, '_')).sort(),
    );
  });

  it('answers every health endpoint with the status code of its role', async () => {
    const expected: Record<string, [number, number]> = {
      '/': [200, 503],
      '/primary': [200, 503],
      '/read-write': [200, 503],
      '/leader': [200, 503],
      '/standby-leader': [503, 503],
      '/standby_leader': [503, 503],
      '/replica': [503, 200],
      '/read-only': [200, 200],
      '/sync': [503, 503],
      '/synchronous': [503, 503],
      '/read-only-sync': [200, 503],
      '/quorum': [503, 503],
      '/read-only-quorum': [200, 503],
      '/async': [503, 200],
      '/asynchronous': [503, 200],
      '/health': [200, 200],
      '/liveness': [200, 200],
      '/readiness': [200, 200],
      '/no-such-endpoint': [503, 503],
      '/replica?lag=16MB': [503, 200],
      '/replica?lag=1048576': [503, 200],
      '/async?lag=1GB': [503, 200],
      '/replica?replication_state=streaming': [503, 200],
      '/replica?replication_state=bogus': [503, 503],
      '/replica?tag_nofailover=false': [503, 503],
      '/readiness?lag=1MB&mode=write': [200, 200],
    };
    for (const [path, [onPrimary, onReplica]] of Object.entries(expected)) {
      assert.equal(await primary.status(path), onPrimary, `primary ${path}`);
      for (const replica of replicas) assert.equal(await replica.status(path), onReplica, `${replica.name} ${path}`);
    }
    const replica = replicas[0]!;
    const zone = `z${cluster.members.indexOf(replica)}`;
    assert.equal(await replica.status(`/replica?tag_zone=${zone}`), 200);
    assert.equal(await replica.status('/replica?tag_zone=elsewhere'), 503);
    assert.equal(await replica.status('/replica?tag_missing=1'), 503);
    assert.equal(await primary.status('/primary?tag_zone=elsewhere'), 200, 'tag filters are ignored on leader paths');

    for (const method of ['HEAD', 'OPTIONS']) {
      const response = await fetch(`${primary.apiUrl}/primary`, { method });
      assert.equal(response.status, 200);
      assert.equal((await response.text()).length, 0, `${method} has no body`);
      const onReplica = await fetch(`${replica.apiUrl}/primary`, { method });
      assert.equal(onReplica.status, 503);
    }
    const liveness = await primary.get('/liveness');
    assert.equal(liveness.status, 200);
    assert.equal(liveness.body, '', 'liveness answers with the status line only');
    const unknown = await primary.get('/no-such-endpoint');
    assert.equal(unknown.json().role, 'primary', 'unknown GET paths still carry the document');
    assert.equal((await fetch(`${primary.apiUrl}/no-such-endpoint`, { method: 'POST' })).status, 501);
    assert.equal(await replica.status('/replica?lag=lots'), 400);
    assert.equal(await replica.status('/readiness?mode=sideways'), 400);
  });

  it('serves the node document, /cluster, /history and /metrics', async () => {
    // The document is the HA loop's last snapshot (at most loop_wait old): wait until it shows both senders.
    const doc = await cluster.waitFor(
      'both replicas in the node document',
      async () => {
        const current = (await primary.get('/ha')).json();
        return (current.replication as unknown[] | undefined)?.length === 2 ? current : undefined;
      },
      10_000,
    );
    const [{ sysid }] = await primary.query<{ sysid: string }>('SELECT system_identifier::text AS sysid FROM pg_control_system()');
    assert.equal(doc.state, 'running');
    assert.equal(doc.role, 'primary');
    assert.match(String(doc.postmaster_start_time), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\+00:00$/);
    assert.ok(Number(doc.server_version) >= 150000 && Number(doc.server_version) < 160000);
    assert.equal(typeof (doc.xlog as { location: number }).location, 'number');
    assert.equal(doc.timeline, 1);
    const replication = doc.replication as Record<string, unknown>[];
    assert.equal(replication.length, 2);
    for (const row of replication) {
      assert.deepEqual(Object.keys(row), ['usename', 'application_name', 'client_addr', 'state', 'sync_state', 'sync_priority']);
      assert.equal(row.usename, 'replicator');
      assert.equal(row.sync_state, 'async');
      assert.equal(typeof row.sync_priority, 'number');
    }
    assert.equal(doc.cluster_unlocked, undefined);
    assert.ok(Math.abs(Number(doc.dcs_last_seen) - Date.now() / 1000) < 30);
    assert.equal(doc.database_system_identifier, sysid);
    assert.deepEqual(doc.ha, { version: '0.1.0', scope: cluster.scope, name: primary.name });
    assert.deepEqual(doc.tags, { zone: `z${cluster.members.indexOf(primary)}` });

    const replicaDoc = (await replicas[0]!.get('/ha')).json();
    assert.equal(replicaDoc.role, 'replica');
    assert.equal(replicaDoc.replication_state, 'streaming');
    assert.deepEqual(Object.keys(replicaDoc.xlog as object), ['received_location', 'replayed_location', 'replayed_timestamp', 'paused']);
    assert.equal(replicaDoc.database_system_identifier, sysid);

    const clusterDoc = (await replicas[1]!.get('/cluster')).json() as { members: Record<string, unknown>[]; scope: string };
    assert.equal(clusterDoc.scope, cluster.scope);
    assert.deepEqual(
      clusterDoc.members.map((m) => m.name),
      cluster.members.map((m) => m.name),
    );
    for (const member of clusterDoc.members) {
      const isLeader = member.name === primary.name;
      assert.equal(member.role, isLeader ? 'leader' : 'replica');
      assert.equal(member.state, isLeader ? 'running' : 'streaming');
      assert.match(String(member.api_url), /^http:\/\/127\.0\.0\.\d:\d+\/ha$/);
      assert.equal(typeof member.port, 'number');
      if (!isLeader) {
        assert.match(String(member.lsn), /^[0-9A-F]+\/[0-9A-F]+$/);
        for (const key of ['lag', 'receive_lag', 'replay_lag']) assert.equal(typeof member[key], 'number', key);
      } else {
        assert.equal(member.lag, undefined);
      }
    }
    assert.deepEqual((await primary.get('/history')).json(), []);

    const metrics = (await primary.get('/metrics')).body;
    const names = [
      'ha_version',
      'ha_db_running',
      'ha_postmaster_start_time',
      'ha_primary',
      'ha_xlog_location',
      'ha_standby_leader',
      'ha_replica',
      'ha_sync_standby',
      'ha_quorum_standby',
      'ha_xlog_received_location',
      'ha_xlog_replayed_location',
      'ha_xlog_replayed_timestamp',
      'ha_xlog_paused',
      'ha_db_streaming',
      'ha_db_in_archive_recovery',
      'ha_db_server_version',
      'ha_cluster_unlocked',
      'ha_failsafe_mode_is_active',
      'ha_db_timeline',
      'ha_dcs_last_seen',
      'ha_pending_restart',
      'ha_is_paused',
      'ha_db_state',
    ];
    const sample = (text: string, name: string, member: Member): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}{scope="${cluster.scope}",name="${member.name}"} `));
      assert.ok(line, `${name} sample for ${member.name}`);
      return Number(line.split(' ')[1]);
    };
    for (const name of names) {
      assert.match(metrics, new RegExp(`^# HELP ${name} `, 'm'));
      assert.match(metrics, new RegExp(`^# TYPE ${name} (gauge|counter)$`, 'm'));
    }
    assert.equal(sample(metrics, 'ha_primary', primary), 1);
    assert.equal(sample(metrics, 'ha_db_state', primary), 5);
    assert.equal(sample(metrics, 'ha_version', primary), 100);
    assert.equal(sample(metrics, 'ha_cluster_unlocked', primary), 0);
    assert.ok(sample(metrics, 'ha_xlog_location', primary) > 0);
    const replicaMetrics = (await replicas[0]!.get('/metrics')).body;
    assert.equal(sample(replicaMetrics, 'ha_primary', replicas[0]!), 0);
    assert.equal(sample(replicaMetrics, 'ha_replica', replicas[0]!), 1);
    assert.equal(sample(replicaMetrics, 'ha_db_streaming', replicas[0]!), 1);
    assert.ok(sample(replicaMetrics, 'ha_xlog_replayed_location', replicas[0]!) > 0);
  });

  it('keeps the DCS in Leases and labels each pod with its role', async () => {
    const leases = await cluster.leases();
    const byName = new Map(leases.map((l) => [l.metadata!.name!, l]));
    const leader = byName.get(`${cluster.scope}-leader`)!;
    assert.equal(leader.spec?.holderIdentity, primary.name);
    assert.equal(leader.spec?.leaseDurationSeconds, ttl);
    assert.match(String(leader.spec?.renewTime instanceof Date ? leader.spec.renewTime.toISOString() : leader.spec?.renewTime), /T\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(Number(leader.metadata?.annotations?.optime) > 0);
    const config = byName.get(`${cluster.scope}-config`)!;
    const [{ sysid }] = await primary.query<{ sysid: string }>('SELECT system_identifier::text AS sysid FROM pg_control_system()');
    assert.equal(config.metadata?.annotations?.initialize, sysid);
    assert.equal(JSON.parse(config.metadata?.annotations?.config ?? '{}').ttl, ttl);
    for (const member of cluster.members) {
      const record = JSON.parse(byName.get(`${cluster.scope}-member-${member.name}`)?.metadata?.annotations?.status ?? '{}');
      assert.equal(record.name, member.name);
      assert.equal(record.api_url, `${member.apiUrl}/ha`);
    }
    const core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await cluster.waitFor(
      'role labels',
      async () => {
        for (const member of cluster.members) {
          const pod = await core.readNamespacedPod({ name: member.name, namespace: 'default' });
          if (pod.metadata?.labels?.['keelson.io/role'] !== (member === primary ? 'primary' : 'replica')) return false;
        }
        return true;
      },
      10_000,
    );
  });

  it('restarts a crashed primary PostgreSQL in place on the same timeline', async () => {
    const pid = primary.postmasterPid()!;
    const transitions = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`)?.spec?.leaseTransitions;
    process.kill(pid, 'SIGKILL');
    await cluster.waitFor(
      'postmaster restarted',
      async () => {
        const next = primary.postmasterPid();
        return next !== undefined && next !== pid && (await primary.isWritable());
      },
      30_000,
    );
    const [{ tli }] = await primary.query<{ tli: number }>("SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tli");
    assert.equal(tli, 1);
    assert.equal(await cluster.leaderName(), primary.name);
    const after = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-leader`)?.spec?.leaseTransitions;
    assert.equal(after, transitions);
    // The loop logs the restart once the start returns; the server may answer a moment before that.
    await cluster.waitFor('the in-place restart logged', async () => /restarted the crashed primary in place/.test(primary.log()), 15_000);
    assert.match(primary.log(), /restarted the crashed primary in place/);
    await primary.query("INSERT INTO items VALUES (2, 'after pg crash')");
  });

  it('fails over when the primary pod is killed and rewinds the diverged old primary back in', async () => {
    const old = primary;
    // Asynchronous replication: wait until the replicas have the last write before pulling the plug.
    for (const replica of replicas) {
      await cluster.waitFor(
        `row 2 on ${replica.name}`,
        async () => (await replica.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n === '2',
        20_000,
      );
    }
    const killedAt = Date.now();
    old.killPod();
    const others = cluster.members.filter((m) => m !== old);
    primary = await cluster.waitFor('a new primary', () => writablePrimary(others), 60_000);
    const failoverMs = Date.now() - killedAt;
    // The harness reports the container terminated (as the kubelet does); with PostgreSQL and the
    // API refusing too, a replica takes the lease early instead of waiting for it to lapse (ADR 0404).
    await cluster.waitFor('the takeover logged', async () => /took over the lock of crashed/.test(primary.log()), 10_000);
    process.stderr.write(`# crash failover by early takeover: writable within ${failoverMs} ms of the kill\n`);
    assert.equal((await primary.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n, '2');
    await cluster.waitFor('new leader in the lease', async () => (await cluster.leaderName()) === primary.name, 10_000);
    await cluster.waitFor('/primary 200 on the new leader only', async () => (await cluster.primary()) === primary, 10_000);

    // Make the old primary diverge: run it alone as a primary and write something the cluster never saw.
    // The killed postmaster's backends must be gone first: they hold its shared memory, and a new postmaster refuses to start.
    await cluster.waitFor("the killed postmaster's processes gone", async () => old.dataDirPids().length === 0, 15_000);
    const runAs = await resolveRunAs(undefined);
    // A killed postmaster's shared memory can outlive its processes for a moment: retry the start, bounded.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await runToolOrThrow(join(pgBin, 'pg_ctl'), ['-D', old.dataDir, '-l', join(old.baseDir, 'splitbrain.log'), '-w', 'start'], { runAs });
        break;
      } catch (error) {
        if (attempt >= 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    await old.query('CREATE TABLE splitbrain (id int)');
    await runToolOrThrow(join(pgBin, 'pg_ctl'), ['-D', old.dataDir, '-m', 'fast', '-w', 'stop'], { runAs });

    old.start();
    // Before its PostgreSQL runs again, the restarted member's pod already says replica: the label
    // left from before the crash must not route -rw clients to it.
    await cluster.waitFor('the restarted member answering', async () => (await old.status('/liveness').catch(() => 0)) !== 0, 30_000);
    const core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const restarted = await core.readNamespacedPod({ name: old.name, namespace: 'default' });
    assert.equal(restarted.metadata?.labels?.['keelson.io/role'], 'replica', "the crashed primary's pod is relabelled replica at start");
    await cluster.waitFor('old primary streaming again', async () => (await old.status('/replica?replication_state=streaming')) === 200, 60_000);
    assert.match(old.log(), /pg_rewind finished/);
    const tables = await old.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'splitbrain'");
    assert.equal(tables[0]?.n, '0', 'the diverged write is gone');
    await primary.query("INSERT INTO items VALUES (3, 'after failover')");
    await cluster.waitFor(
      'rejoined member replays new writes',
      async () => (await old.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n === '3',
      20_000,
    );
    const history = (await primary.get('/history')).json() as unknown as [number, number, string, string][];
    assert.equal(history.length, 1);
    assert.equal(history[0]![0], 1);
    assert.ok(history[0]![1] > 0);
  });

  it('hands over on a clean stop of the primary by releasing the lease', async () => {
    const old = primary;
    replicas = cluster.members.filter((m) => m !== old);
    for (const replica of replicas) {
      await cluster.waitFor(
        `row 3 on ${replica.name}`,
        async () => (await replica.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n === '3',
        20_000,
      );
    }
    await old.stop();
    assert.equal(old.process?.exitCode, 0);
    assert.match(old.log(), /released the leader lease/);
    const others = cluster.members.filter((m) => m !== old);
    primary = await cluster.waitFor('a new primary', () => writablePrimary(others), 30_000);
    assert.equal((await primary.query<{ n: string }>('SELECT count(*) AS n FROM items'))[0]?.n, '3');
    old.start();
    await cluster.waitFor('old primary back as a replica', async () => (await old.status('/replica?replication_state=streaming')) === 200, 60_000);
    assert.equal(await cluster.primary(), primary);
  });
});
