import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadKubeConfig } from '../../../lib/kube/client.js';
import { createLogger } from '../../../lib/log.js';
import { startLocalStack, type LocalStack } from '../../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from '../e2e-support.js';
import { eventually } from '../support.js';

/**
 * Backups through the operator on the stand-in with real PostgreSQL and pgBackRest: a cluster
 * with a filesystem repository gets BackupReady=True and its schedule's backup; a cluster whose
 * S3 credentials Secret does not exist gets BackupReady=False naming the Secret, and an Event,
 * while the operator keeps serving both; a new cluster restored from the first one's repository
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
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let vault: ClusterDriver;
  let broken: ClusterDriver;
  const backupReady = (s: BackupStatus) => s.conditions?.find((c) => c.type === 'BackupReady');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-e2e-backup-'));
    chmodSync(dir, 0o755);
    stack = await startLocalStack({ dir, logger, operatorVersion: '0.1.0', ipPrefix: '127.0.53' });
    api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
    vault = clusterDriver(api, ns, 'vault', viaClusterIp);
    broken = clusterDriver(api, ns, 'broken', viaClusterIp);
  });

  after(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a missing credentials Secret: BackupReady=False naming it, an Event, no crash loop', async () => {
    await broken.create({
      instances: 1,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      backup: { repositories: [{ name: 'cloud', s3: { bucket: 'backups', endpoint: 'localhost', credentialsSecret: { name: 'no-such-secret' } } }] },
    });
    const condition = await eventually('BackupReady=False', async () => {
      const c = backupReady((await broken.status()) as BackupStatus);
      return c?.status === 'False' ? c : undefined;
    }, 60_000);
    assert.equal(condition.reason, 'SecretMissing');
    assert.match(condition.message, /Secret no-such-secret \(spec\.backup\.repositories\[0\]\.s3\.credentialsSecret\) not found/);
    const events = await api.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=broken' });
    assert.ok(events.items.some((e) => e.reason === 'SecretMissing'), 'an Event says why');
  });

  it('a filesystem repository: BackupReady=True, and the schedule takes a backup', async () => {
    // Every minute: the first due minute after creation starts a backup (an incremental without a full becomes a full).
    await vault.create({
      instances: 2,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }], schedules: { incremental: '* * * * *' }, retention: { fullCount: 2 } },
    });
    await vault.healthyWith(2, 120_000);
    const ready = await eventually('BackupReady=True', async () => {
      const c = backupReady((await vault.status()) as BackupStatus);
      return c?.status === 'True' ? c : undefined;
    }, 90_000);
    assert.equal(ready.reason, 'ArchivingWorks');
    const status = await eventually('a scheduled backup listed', async () => {
      const s = (await vault.status()) as BackupStatus;
      return (s.backup?.backups ?? 0) >= 1 ? s : undefined;
    }, 120_000);
    assert.ok(status.backup?.lastScheduled?.incremental, 'the schedule recorded its run');
    const brokenCondition = backupReady((await broken.status()) as BackupStatus);
    assert.equal(brokenCondition?.reason, 'SecretMissing', 'the other cluster still reports its own problem');
  });

  it('bootstrap.recovery: a new cluster restored from the repository has the rows, and archives on its own', async () => {
    await vault.readPassword();
    await vault.query('vault-rw', 'CREATE TABLE kept AS SELECT generate_series(1, 42) AS id');
    const [switched] = await vault.query('vault-rw', 'SELECT pg_walfile_name(pg_switch_wal()) AS wal');
    await eventually('the switched WAL archived', async () => {
      const [row] = await vault.query('vault-rw', 'SELECT last_archived_wal AS last FROM pg_stat_archiver');
      return row?.last !== null && String(row!.last) >= String(switched!.wal) ? row : undefined;
    }, 60_000);
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
    const ready = await eventually('the copy archives into its own stanza', async () => {
      const c = backupReady((await copy.status()) as BackupStatus);
      return c?.status === 'True' ? c : undefined;
    }, 90_000);
    assert.equal(ready.reason, 'ArchivingWorks');
  });
});
