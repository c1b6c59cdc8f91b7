import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { createLogger } from '../../lib/log.js';
import type { LocalStack } from '../../local/cluster/stack.js';
import { apiVersion, kind } from '../../api/crd/types.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually, kubectl } from './support.js';
import { currentTimelineSql } from '../support/postgres.js';

/**
 * The controlled swap of two DatabaseClusters on the stand-in with real PostgreSQL, as one
 * `kubectl apply` of both specs: `swa` (primary) gets replica.enabled: true with source swb, and
 * `swb` (its standby) replica.enabled: false with promotion AfterSourceDemotion. Under a writer
 * that records every acknowledged commit: none is lost, swa keeps its pod, volume and system
 * identifier and streams from swb on swb's new timeline, and the status of both shows the steps.
 * Before that: the standby's status shows its lag and the source's timeline, and a primary asked
 * to follow a cluster of another database system is refused and keeps running.
 */
const ns = 'default';
const logger = createLogger({ name: 'standby-swap-e2e', level: process.env.LOG_LEVEL ?? 'silent' });
const ha = { ttl: 10, loopWait: 2, retryTimeout: 4 };

interface ReplicaStatus {
  role?: string;
  source?: string;
  step?: string;
  lagBytes?: number;
  sourceTimeline?: number;
  demotion?: { systemIdentifier: string; timeline: number; checkpointLsn: string };
  promotedAt?: string;
}
type Status = Awaited<ReturnType<ClusterDriver['status']>> & { replica?: ReplicaStatus; systemIdentifier?: string };

/** Writes one row every 100 ms to whichever cluster accepts it, keeping the ids whose COMMIT was acknowledged. */
function swapWriter(targets: [ClusterDriver, string][], firstId = 1) {
  const acked: { id: number; at: number }[] = [];
  let stopped = false;
  let next = firstId;
  let current = 0;
  const loop = (async () => {
    while (!stopped) {
      const id = next++;
      const [driver, service] = targets[current]!;
      try {
        await driver.query(service, "INSERT INTO swap_log (id, note) VALUES ($1, 'acknowledged')", [id]);
        acked.push({ id, at: Date.now() });
      } catch {
        current = (current + 1) % targets.length; // read-only or stopping: try the other cluster next
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    acked,
    longestGapMs: () => acked.slice(1).reduce((gap, ack, i) => Math.max(gap, ack.at - acked[i]!.at), 0),
    async stop(): Promise<number[]> {
      stopped = true;
      await loop;
      return acked.map((a) => a.id);
    },
  };
}

describe('controlled swap of two DatabaseClusters (stand-in, local node, real PostgreSQL)', { timeout: 600_000 }, () => {
  let dir: string;
  let e2e: E2eStack;
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let swa: ClusterDriver;
  let swb: ClusterDriver;
  const status = async (driver: ClusterDriver) => (await driver.status()) as Status;
  const ids = async (driver: ClusterDriver, service: string) => new Set((await driver.query(service, 'SELECT id FROM swap_log')).map((r) => Number(r.id)));

  before(async () => {
    e2e = await startE2eStack('swap', { logger, ipPrefix: '127.0.59' });
    ({ dir, stack, api } = e2e);
    swa = clusterDriver(api, ns, 'swa', viaClusterIp);
    swb = clusterDriver(api, ns, 'swb', viaClusterIp);
  });

  after(async () => {
    await e2e?.close();
  });

  it('a standby cluster shows its lag behind the source and the source timeline', async () => {
    await swa.create({ instances: 1, ha });
    await swa.healthyWith(1, 120_000);
    await swa.readPassword();
    await swa.query('swa-rw', 'CREATE TABLE swap_log (id int PRIMARY KEY, note text)');
    await swb.create({ instances: 1, ha, replica: { source: { cluster: 'swa' } } });
    await swb.healthyWith(1, 180_000);
    await swb.readPassword();
    const replica = await eventually(
      'swb status with lag and source timeline',
      async () => {
        const r = (await status(swb)).replica;
        return r?.step === 'Following' && typeof r.lagBytes === 'number' && r.sourceTimeline !== undefined ? r : undefined;
      },
      60_000,
    );
    assert.equal(replica.role, 'standby');
    assert.equal(replica.sourceTimeline, 1, 'swa is on its first timeline');
    assert.ok(replica.lagBytes! >= 0);
    const [a, b] = [await status(swa), await status(swb)];
    assert.ok(a.systemIdentifier, 'the primary cluster shows its system identifier');
    assert.equal(b.systemIdentifier, a.systemIdentifier, 'the standby is a copy of the same database system');
  });

  it('refuses to demote a primary cluster into a standby of another database system, and keeps it running', async () => {
    const lone = clusterDriver(api, ns, 'lone', viaClusterIp);
    await lone.create({ instances: 1, ha });
    await lone.healthyWith(1, 120_000);
    await lone.readPassword();
    const startedAt = async () => (await lone.query('lone-rw', 'SELECT pg_postmaster_start_time()::text AS t, pg_is_in_recovery() AS standby'))[0];
    // The -rw address of a cluster just made may need a moment before it forwards.
    const before = await eventually('lone-rw answers', () => startedAt().catch(() => undefined), 30_000);
    const own = (await status(lone)).systemIdentifier;
    assert.ok(own && own !== (await status(swa)).systemIdentifier, 'lone was initialised on its own');
    await kubectl(
      stack.kubeconfigPath,
      dir,
      '-n',
      ns,
      'patch',
      'dbc/lone',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { replica: { source: { cluster: 'swa' } } } }),
    );
    const message = /replica\.source: DatabaseCluster default\/swa has database system identifier \d+, this cluster \d+/;
    const applied = await eventually(
      'lone refused',
      async () => {
        const condition = (await lone.status()).conditions?.find((c) => c.type === 'Applied');
        return condition?.status === 'False' && message.test(condition.message) ? condition : undefined;
      },
      60_000,
    );
    assert.equal(applied.reason, 'Refused');
    assert.ok(
      (await lone.events()).some((e) => e.reason === 'ApplyRefused' && message.test(e.message ?? '')),
      'an ApplyRefused Event',
    );
    const row = await startedAt();
    assert.deepEqual(row, { t: before.t, standby: false }, 'lone is still the same writable primary: never stopped');
    assert.ok(!(await lone.events()).some((e) => e.reason === 'Demoting'), 'no demotion was started');
    await api.custom.deleteNamespacedCustomObject({ group: 'keelson.io', version: 'v1', namespace: ns, plural: 'databaseclusters', name: 'lone' });
  });

  it('swaps the two clusters in one apply under a writer: no acknowledged commit lost, the old primary streams from the new one', async () => {
    const before = await status(swa);
    const [oldPod] = await swa.pods();
    const claimUid = (await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: `data-${oldPod!.metadata!.name}` }).catch(() => undefined))
      ?.metadata?.uid;
    const writer = swapWriter([
      [swa, 'swa-rw'],
      [swb, 'swb-rw'],
    ]);
    await eventually('writes before the swap', async () => writer.acked.length >= 20, 60_000);

    // Both specs in one apply; the standby's document first (the order the operator must cope with).
    const file = join(dir, 'swap.yaml');
    const doc = (name: string, spec: Record<string, unknown>) => stringify({ apiVersion, kind, metadata: { name, namespace: ns }, spec });
    writeFileSync(
      file,
      [
        doc('swb', { instances: 1, ha, replica: { enabled: false, promotion: 'AfterSourceDemotion', source: { cluster: 'swa' } } }),
        doc('swa', { instances: 1, ha, replica: { enabled: true, source: { cluster: 'swb' } } }),
      ].join('---\n'),
    );
    const applied = Date.now();
    await kubectl(stack.kubeconfigPath, dir, 'apply', '-f', file);

    const promoted = await eventually(
      'swb promoted',
      async () => {
        const r = (await status(swb)).replica;
        return r?.role === 'primary' && r.step === 'Promoted' ? r : undefined;
      },
      180_000,
    );
    const swapSeconds = (Date.now() - applied) / 1000;
    assert.ok(promoted.promotedAt);
    const atPromotion = writer.acked.length;
    await eventually('writes on swb after the swap', async () => writer.acked.length >= atPromotion + 20, 90_000);
    const acked = await writer.stop();

    const onNew = await ids(swb, 'swb-rw');
    const lost = acked.filter((id) => !onNew.has(id));
    assert.deepEqual(lost, [], 'every acknowledged commit is on the new primary');
    await eventually(
      'every acknowledged commit on the old primary, now a standby',
      async () => {
        const onOld = await ids(swa, 'swa-rw');
        return acked.every((id) => onOld.has(id));
      },
      90_000,
    );

    const demoted = await eventually(
      'swa following swb on its new timeline',
      async () => {
        const s = await status(swa);
        return s.replica?.role === 'standby' && s.replica.step === 'Following' && s.replica.sourceTimeline === 2 ? s : undefined;
      },
      90_000,
    );
    assert.equal(demoted.systemIdentifier, before.systemIdentifier, 'swa keeps its database system identifier');
    assert.equal(demoted.replica?.demotion?.systemIdentifier, before.systemIdentifier);
    assert.equal(demoted.replica?.demotion?.timeline, 1, 'demoted from its first timeline');
    const [pod] = await swa.pods();
    assert.equal(pod?.metadata?.uid, oldPod?.metadata?.uid, 'swa was demoted in place, not re-created');
    if (claimUid)
      assert.equal(
        (await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: `data-${pod!.metadata!.name}` })).metadata?.uid,
        claimUid,
        'on the same volume',
      );
    const swbRw = (await api.core.readNamespacedService({ namespace: ns, name: 'swb-rw' })).spec?.clusterIP;
    const [receiver] = await eventually(
      'swa streams from swb',
      async () => {
        const rows = await swa.query(
          'swa-rw',
          'SELECT status, sender_host, conninfo, received_tli, (SELECT system_identifier::text FROM pg_control_system()) AS sysid FROM pg_stat_wal_receiver',
        );
        return rows[0]?.status === 'streaming' ? rows : undefined;
      },
      60_000,
    );
    // verify-full by the name swb's certificate carries, dialling the swb-rw Service's address.
    assert.equal(receiver?.sender_host, 'swb-rw.default.svc', 'checked against the swb-rw name');
    // Tested, not printed: the connection string holds the replication password.
    const conninfo = String(receiver?.conninfo);
    assert.ok(conninfo.includes(`hostaddr='${swbRw}'`) && conninfo.includes('sslmode=verify-full'), 'through the swb-rw Service, verified');
    assert.equal(Number(receiver?.received_tli), 2, "on swb's new timeline");
    assert.equal(receiver?.sysid, before.systemIdentifier);

    const reasons = async (driver: ClusterDriver) => (await driver.events()).map((e) => e.reason);
    const swaEvents = await reasons(swa);
    const swbEvents = await reasons(swb);
    assert.ok(swaEvents.includes('Demoting') && swaEvents.includes('Demoted'), `swa Events show the demotion: ${swaEvents.join(', ')}`);
    assert.ok(swbEvents.includes('Promoting') && swbEvents.includes('Promoted'), `swb Events show the promotion: ${swbEvents.join(', ')}`);
    assert.ok(swbEvents.includes('WaitingForSourceDemotion') || swbEvents.includes('CatchingUp'), 'swb waited for the demotion');
    const roleChange = (s: Status) => s.conditions?.find((c) => c.type === 'RoleChange');
    assert.equal(roleChange(await status(swb))?.status, 'False');
    assert.equal(roleChange(await status(swa))?.reason, 'Standby');
    process.stdout.write(
      `# swap: ${acked.length} acknowledged, 0 lost, longest write gap ${writer.longestGapMs()} ms, promoted ${swapSeconds.toFixed(1)} s after the apply\n`,
    );
  });

  it("swaps back in one apply with the old primary's document first: it waits for its peer, then the same order holds", async () => {
    const writer = swapWriter(
      [
        [swb, 'swb-rw'],
        [swa, 'swa-rw'],
      ],
      1_000_000,
    );
    await eventually('writes before the swap back', async () => writer.acked.length >= 20, 60_000);
    const file = join(dir, 'swap-back.yaml');
    const doc = (name: string, spec: Record<string, unknown>) => stringify({ apiVersion, kind, metadata: { name, namespace: ns }, spec });
    writeFileSync(
      file,
      [
        doc('swb', { instances: 1, ha, replica: { enabled: true, source: { cluster: 'swa' } } }),
        doc('swa', { instances: 1, ha, replica: { enabled: false, promotion: 'AfterSourceDemotion', source: { cluster: 'swb' } } }),
      ].join('---\n'),
    );
    await kubectl(stack.kubeconfigPath, dir, 'apply', '-f', file);
    await eventually(
      'swa primary again',
      async () => {
        const r = (await status(swa)).replica;
        return r?.role === 'primary' && r.step === 'Promoted' ? r : undefined;
      },
      180_000,
    );
    const atPromotion = writer.acked.length;
    await eventually('writes on swa after the swap back', async () => writer.acked.length >= atPromotion + 20, 90_000);
    const acked = await writer.stop();
    const onNew = await ids(swa, 'swa-rw');
    assert.deepEqual(
      acked.filter((id) => !onNew.has(id)),
      [],
      'every acknowledged commit is on swa',
    );
    const back = await eventually(
      'swb following swa on timeline 3',
      async () => {
        const s = await status(swb);
        return s.replica?.role === 'standby' && s.replica.step === 'Following' && s.replica.sourceTimeline === 3 ? s : undefined;
      },
      90_000,
    );
    assert.equal(back.replica?.demotion?.timeline, 2, 'swb was demoted from the timeline it promoted onto');
    const [row] = await swa.query('swa-rw', `SELECT ${currentTimelineSql('t')}`);
    assert.equal(Number(row?.t), 3);
    process.stdout.write(`# swap back: ${acked.length} acknowledged, 0 lost, longest write gap ${writer.longestGapMs()} ms\n`);
  });
});
