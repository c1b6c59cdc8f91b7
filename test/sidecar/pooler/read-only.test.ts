import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { Labels, PodComponents } from '../../../api/naming.js';
import { callMember, type ClientOptions } from '../../../ctl/client.js';
import { runCtl } from '../../ctl/ctl-runner.js';
import { startCluster, type Member, type TestCluster } from '../ha-node/harness.js';
import { settled } from '../ha-node/traffic.js';
import { freePort } from '../../support/ports.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from './support.js';

/**
 * The read-only pooler behind a real PgBouncer, on the stand-in without DNS: the primary's
 * ha-node finds it as a pod of the cluster labelled as the read-only pooler component and points
 * it at a streaming replica (its address from the member records), so a client reaches a server in
 * recovery. A switchover never pauses it and it reaches a replica again afterwards; with no
 * replica it falls back to the primary. Every wait has a deadline.
 */
const credentials = { username: 'keelson', password: 'pooler-api-secret' };
const api: ClientOptions = { credentials, timeoutMs: 40_000 };
const reader = { user: 'reader', password: 'reader-secret' };
const perTest = { timeout: 150_000 };

interface Served {
  inRecovery: boolean;
  address: string;
  port: number;
}

describe('read-only pooler', { timeout: 480_000 }, () => {
  let cluster: TestCluster;
  let pooler: TestPooler;
  let controlPort: number;
  const dir = scratchDir();

  /** Where a new client of the read-only pooler lands, or undefined while it cannot connect. */
  const served = async (): Promise<Served | undefined> => {
    const client = await pooler.client(reader.user, reader.password, 'postgres').catch(() => undefined);
    if (!client) return undefined;
    try {
      const { rows } = await client.query<{ r: boolean; a: string; p: number }>(
        'SELECT pg_is_in_recovery() AS r, host(inet_server_addr()) AS a, inet_server_port() AS p',
      );
      return rows[0] ? { inRecovery: rows[0].r, address: rows[0].a, port: rows[0].p } : undefined;
    } catch {
      return undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const on = (member: Member) => async () => {
    const s = await served();
    return s && s.address === member.ip && s.port === member.pgPort ? s : undefined;
  };

  before(async () => {
    const passwordFile = poolerPasswordFile(dir, 'pooler-role-secret');
    controlPort = await freePort('127.0.0.1');
    cluster = await startCluster({
      members: 2,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'reads',
      env: {
        KEELSON_API_USERNAME: credentials.username,
        KEELSON_API_PASSWORD: credentials.password,
        KEELSON_POOLER_RO_PODS: String(controlPort),
        KEELSON_POOLER_PASSWORD_FILE: passwordFile,
      },
    });
    // The read-only pooler's pod, as its Deployment's would be: ha-node reads its address from the pod list.
    const core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const labels = { [Labels.cluster]: 'reads', [Labels.component]: PodComponents.poolerReadOnly };
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'reads-pooler-ro-0', labels }, spec: { containers: [{ name: 'pgbouncer', image: 'keelson' }] } },
    });
    await core.patchNamespacedPodStatus(
      { name: 'reads-pooler-ro-0', namespace: 'default', body: { status: { phase: 'Running', podIP: '127.0.0.1' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const primary = await settled(cluster, 1);
    await cluster.waitFor(
      'the pooler lookup function',
      async () => (await primary.query<{ f: string | null }>("SELECT to_regprocedure('keelson_pooler.user_lookup(text)')::text AS f").catch(() => []))[0]?.f,
      60_000,
    );
    await primary.query(`CREATE ROLE ${reader.user} LOGIN PASSWORD '${reader.password}'`);
    // Started at the primary, as a pooler whose -ro Service could not be resolved: ha-node must move it.
    pooler = await startTestPooler({ baseDir: dir, target: { host: primary.ip, port: primary.pgPort }, passwordFile, credentials, controlPort });
  });

  after(async () => {
    await pooler?.running.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client of the read-only pooler reaches the streaming replica', perTest, async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const replica = cluster.members.find((m) => m !== primary)!;
    const landed = await cluster.waitFor('the read-only pooler on the replica', on(replica), 60_000);
    assert.equal(landed.inRecovery, true);
  });

  it('a switchover does not pause it, and afterwards it reaches a replica again (the old primary)', perTest, async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const candidate = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor('a streaming replica', async () => (await candidate.status('/replica?replication_state=streaming')) === 200, 60_000);
    let pausedSeen = false;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        if ((await pooler.running.control.state()).paused) pausedSeen = true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      const reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, api);
      assert.equal(reply.status, 200, reply.text);
      await cluster.waitFor('the new primary', async () => (await cluster.primary()) === candidate, 60_000);
      const landed = await cluster.waitFor('the read-only pooler on the old primary, now a replica', on(primary), 90_000);
      assert.equal(landed.inRecovery, true);
    } finally {
      watching = false;
      await watcher;
    }
    assert.equal(pausedSeen, false, 'the read-only pooler is never paused');
  });

  it('keelson ctl list shows it as read-only, with its target', perTest, async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const replica = cluster.members.find((m) => m !== primary)!;
    const shown = await runCtl(['--url', primary.apiUrl, '--username', credentials.username, '--password', credentials.password, 'list']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      new RegExp(`\\| 127\\.0\\.0\\.1:${controlPort} \\(read-only\\) +\\| no +\\| ${replica.ip}:${replica.pgPort} +\\| yes +\\|`),
      shown.stdout,
    );
    const listed = (await primary.get('/poolers')).json().poolers as Array<{ readOnly?: boolean }>;
    assert.deepEqual(
      listed.map((p) => p.readOnly),
      [true],
    );
  });

  it('with no replica it falls back to the primary, and returns to the replica when it streams again', perTest, async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const replica = cluster.members.find((m) => m !== primary)!;
    await replica.stop();
    const fallback = await cluster.waitFor('the read-only pooler on the primary', on(primary), 60_000);
    assert.equal(fallback.inRecovery, false);
    replica.start();
    const back = await cluster.waitFor('the read-only pooler on the replica again', on(replica), 90_000);
    assert.equal(back.inRecovery, true);
  });
});
