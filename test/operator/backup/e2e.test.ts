import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import type { LocalStack } from '../../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from '../e2e-support.js';
import { startE2eStack, type E2eStack } from '../e2e-stack.js';
import type { BackupObject } from '../../../api/crd/backup-kind.js';
import { haNodeClientFor } from '../../support/ha-node-api.js';
import { eventually, kubectl } from '../support.js';

/**
 * Backups through the operator on the stand-in with real PostgreSQL and pgBackRest: a cluster
 * with a filesystem repository gets BackupReady=True and its schedule's backup; a cluster whose
 * S3 credentials Secret does not exist gets BackupReady=False naming the Secret, and an Event,
 * while the operator keeps serving both; Backup objects (the first backup, the schedule's, one
 * asked for) carry pgBackRest's details and deleting one deletes no data; a new cluster restored from the first one's repository
 * has its rows.
 */
const ns = 'default';
const logger = createLogger({ name: 'e2e-backup', level: process.env.LOG_LEVEL ?? 'silent' });

interface BackupStatus {
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  backup?: { backups?: number; lastScheduled?: Record<string, string> };
}

describe('DatabaseCluster backups end to end (stand-in, real PostgreSQL and pgBackRest)', { timeout: 240_000 }, () => {
  let dir: string;
  let e2e: E2eStack;
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let vault: ClusterDriver;
  let broken: ClusterDriver;
  const backupReady = (s: BackupStatus) => s.conditions?.find((c) => c.type === 'BackupReady');
  const listBackups = async () => (await api.listBackups(ns)) as unknown as BackupObject[];
  const readBackup = async (name: string) => (await listBackups()).find((b) => b.metadata.name === name);
  const createBackup = (name: string, spec: Record<string, unknown>) =>
    api.createBackup(ns, { apiVersion: 'keelson.io/v1', kind: 'Backup', metadata: { name, namespace: ns }, spec });

  before(async () => {
    e2e = await startE2eStack('e2e-backup', { logger, ipPrefix: '127.0.53' });
    ({ dir, stack, api } = e2e);
    vault = clusterDriver(api, ns, 'vault', viaClusterIp);
    broken = clusterDriver(api, ns, 'broken', viaClusterIp);
  });

  after(async () => {
    await e2e?.close();
  });

  it('a missing credentials Secret: BackupReady=False naming it, an Event, no crash loop', async () => {
    await broken.create({
      instances: 1,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      backup: { repositories: [{ name: 'cloud', s3: { bucket: 'backups', endpoint: 'localhost', credentialsSecret: { name: 'no-such-secret' } } }] },
    });
    const condition = await eventually(
      'BackupReady=False',
      async () => {
        const c = backupReady((await broken.status()) as BackupStatus);
        return c?.status === 'False' ? c : undefined;
      },
      60_000,
    );
    assert.equal(condition.reason, 'SecretMissing');
    assert.match(condition.message, /Secret no-such-secret \(spec\.backup\.repositories\[0\]\.s3\.credentialsSecret\) not found/);
    const events = await api.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=broken' });
    assert.ok(
      events.items.some((e) => e.reason === 'SecretMissing'),
      'an Event says why',
    );
  });

  it('a filesystem repository: BackupReady=True, and the schedule takes a backup', async () => {
    // Every minute: the first due minute after creation starts a backup (an incremental without a full becomes a full).
    await vault.create({
      instances: 2,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      backup: {
        repositories: [{ name: 'local', volume: { size: '1Gi' } }],
        schedules: { incremental: '* * * * *', immediate: true },
        retention: { fullCount: 2 },
      },
    });
    await vault.healthyWith(2, 120_000);
    const ready = await eventually(
      'BackupReady=True',
      async () => {
        const c = backupReady((await vault.status()) as BackupStatus);
        return c?.status === 'True' ? c : undefined;
      },
      90_000,
    );
    assert.equal(ready.reason, 'ArchivingWorks');
    // The first backup (schedules.immediate) comes first; the schedule's next minute after it.
    const status = await eventually(
      'a backup listed and a scheduled run recorded',
      async () => {
        const s = (await vault.status()) as BackupStatus;
        return (s.backup?.backups ?? 0) >= 1 && s.backup?.lastScheduled?.incremental ? s : undefined;
      },
      150_000,
    );
    assert.ok(status.backup?.lastScheduled?.initial, 'the first backup recorded too');
    const brokenCondition = backupReady((await broken.status()) as BackupStatus);
    assert.equal(brokenCondition?.reason, 'SecretMissing', 'the other cluster still reports its own problem');
  });

  it("Backup objects: the first backup and each schedule run are objects with pgBackRest's details; kubectl get kbk lists them", async () => {
    const initial = await eventually(
      'vault-initial Completed',
      async () => {
        const b = await readBackup('vault-initial');
        return b?.status?.phase === 'Completed' ? b : undefined;
      },
      120_000,
    );
    assert.equal(initial.spec.type, 'full');
    assert.match(initial.status!.label!, /^\d{8}-\d{6}F$/);
    assert.match(initial.status!.lsnStart!, /^[0-9A-F]+\/[0-9A-F]+$/);
    assert.match(initial.status!.systemIdentifier!, /^\d+$/);
    assert.equal(initial.status!.timeline, 1);
    assert.ok(initial.status!.sizeBytes! > 1_000_000, 'the database size');
    assert.ok(initial.status!.repoSizeBytes! > 0 && initial.status!.repoSizeBytes! < initial.status!.sizeBytes!, 'compressed in the repository');
    assert.match(initial.status!.member!, /^vault-\d$/);
    const scheduled = await eventually(
      'a scheduled incremental Completed',
      async () => {
        const list = await listBackups();
        return list.find((b) => /^vault-incr-\d{12}$/.test(b.metadata.name) && b.status?.phase === 'Completed');
      },
      150_000,
    );
    assert.equal(scheduled.spec.type, 'incr');
    const table = await kubectl(stack.kubeconfigPath, dir, '-n', ns, 'get', 'kbk');
    assert.match(table, /^NAME\s+CLUSTER\s+TYPE\s+PHASE\s+LABEL\s+STOPPED\s+AGE/m);
    assert.match(table, new RegExp(`^vault-initial\\s+vault\\s+full\\s+Completed\\s+${initial.status!.label}\\s`, 'm'));
    assert.match(table, new RegExp(`^${scheduled.metadata.name}\\s+vault\\s+incr\\s+Completed\\s`, 'm'));
  });

  it('a Backup naming an unknown repository fails, naming spec.repository; a requested one runs; deleting it deletes no data', async () => {
    await createBackup('vault-nowhere', { cluster: 'vault', type: 'full', repository: 'elsewhere' });
    const failed = await eventually(
      'vault-nowhere Failed',
      async () => {
        const b = await readBackup('vault-nowhere');
        return b?.status?.phase === 'Failed' ? b : undefined;
      },
      60_000,
    );
    assert.match(failed.status!.message!, /^spec\.repository: the cluster has no repository named "elsewhere"/);
    await createBackup('vault-manual', { cluster: 'vault', type: 'diff', repository: 'local' });
    const done = await eventually(
      'vault-manual Completed',
      async () => {
        const b = await readBackup('vault-manual');
        return b?.status?.phase === 'Completed' || b?.status?.phase === 'Failed' ? b : undefined;
      },
      150_000,
    );
    assert.equal(done.status!.phase, 'Completed', done.status!.message);
    assert.match(done.status!.label!, /^\d{8}-\d{6}F_\d{8}-\d{6}D$/);
    await kubectl(stack.kubeconfigPath, dir, '-n', ns, 'delete', 'kbk', 'vault-manual');
    assert.equal(await readBackup('vault-manual'), undefined);
    // The repository still lists it (retention alone removes backups).
    const pods = await api.listPods(ns, 'keelson.io/cluster=vault,keelson.io/role=primary');
    const listed = await (await haNodeClientFor(api, ns, 'vault')).backupStatus(pods[0]!.status!.podIP!);
    assert.ok(
      listed.info?.backups?.some((b) => b.label === done.status!.label),
      'the backup is still in the repository',
    );
  });

  it('bootstrap.recovery: a new cluster restored from the repository has the rows, and archives on its own', async () => {
    await vault.readPassword();
    await vault.query('vault-rw', 'CREATE TABLE kept AS SELECT generate_series(1, 42) AS id');
    const [switched] = await vault.query('vault-rw', 'SELECT pg_walfile_name(pg_switch_wal()) AS wal');
    await eventually(
      'the switched WAL archived',
      async () => {
        const [row] = await vault.query('vault-rw', 'SELECT last_archived_wal AS last FROM pg_stat_archiver');
        return row?.last !== null && String(row!.last) >= String(switched!.wal) ? row : undefined;
      },
      60_000,
    );
    const copy = clusterDriver(api, ns, 'vault-copy', viaClusterIp);
    await copy.create({
      instances: 1,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }] },
      bootstrap: { recovery: { source: { cluster: 'vault' }, repository: 'local' } },
    });
    await copy.healthyWith(1, 150_000);
    await copy.readPassword();
    // The Service address may route a moment after the pod turns Ready.
    const rows = await eventually('the restored rows through vault-copy-rw', () => copy.query('vault-copy-rw', 'SELECT count(*)::int AS n FROM kept'), 30_000);
    assert.equal(rows[0]?.n, 42);
    const ready = await eventually(
      'the copy archives into its own stanza',
      async () => {
        const c = backupReady((await copy.status()) as BackupStatus);
        return c?.status === 'True' ? c : undefined;
      },
      90_000,
    );
    assert.equal(ready.reason, 'ArchivingWorks');
  });
});
