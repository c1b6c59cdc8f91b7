import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import type { BackupObject } from '../../../operator/api/backup-kind.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from '../e2e-support.js';
import { startE2eStack, type E2eStack } from '../e2e-stack.js';
import { eventually } from '../support.js';

/**
 * spec.backup.target prefer-standby on the stand-in, real PostgreSQL and pgBackRest: the operator
 * generates the cluster CA into <cluster>-backup-tls, every member runs pgBackRest's TLS server
 * with a certificate for its pod IP, a backup asked for once the standby streams runs there (the
 * Backup object names it), the first backup's object turns Expired once retention removes its
 * set, and with the standby gone a requested backup runs on the primary.
 */
const ns = 'default';
const logger = createLogger({ name: 'e2e-backup-standby', level: process.env.LOG_LEVEL ?? 'silent' });

/** Every file under `dir` (the stand-in's pod folders and logs), for a search for the CA key. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.isFile() && /\.(log|json|txt)$|log$/.test(entry.name) && statSync(path).size < 50_000_000 ? [path] : [];
  });
}

describe('backups on a streaming standby end to end (stand-in, prefer-standby)', { timeout: 300_000 }, () => {
  let dir: string;
  let e2e: E2eStack;
  let api: OperatorKubeApi;
  let ledger: ClusterDriver;
  const readBackup = async (name: string) => ((await api.listBackups(ns)) as unknown as BackupObject[]).find((b) => b.metadata.name === name);
  const finished = (name: string) =>
    eventually(`${name} finished`, async () => {
      const b = await readBackup(name);
      return b?.status?.phase === 'Completed' || b?.status?.phase === 'Failed' ? b : undefined;
    }, 180_000);

  before(async () => {
    e2e = await startE2eStack('e2e-backup-standby', { logger, ipPrefix: '127.0.54' });
    ({ dir, api } = e2e);
    ledger = clusterDriver(api, ns, 'ledger', viaClusterIp);
  });

  after(async () => {
    await e2e?.close();
  });

  it('a backup runs on the streaming standby, which reaches the primary over TLS', async () => {
    await ledger.create({
      instances: 2,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      backup: { repositories: [{ name: 'local', volume: { size: '1Gi' } }], schedules: { immediate: true }, retention: { fullCount: 1 }, target: 'prefer-standby' },
    });
    await ledger.healthyWith(2, 150_000);
    const secret = await api.core.readNamespacedSecret({ namespace: ns, name: 'ledger-backup-tls' });
    const ca = new X509Certificate(Buffer.from(secret.data!['ca.crt']!, 'base64'));
    assert.ok(ca.ca, 'a CA certificate');
    assert.match(Buffer.from(secret.data!['ca.key']!, 'base64').toString(), /BEGIN PRIVATE KEY/);
    // The first backup may run before the standby streams (then on the primary); one asked for later runs on the standby.
    const initial = await finished('ledger-initial');
    assert.equal(initial.status!.phase, 'Completed', initial.status!.message);
    await ledger.healthyWith(2, 60_000);
    await api.createBackup(ns, { apiVersion: 'keelson.io/v1', kind: 'Backup', metadata: { name: 'ledger-standby', namespace: ns }, spec: { cluster: 'ledger', type: 'full' } });
    const onStandby = await finished('ledger-standby');
    assert.equal(onStandby.status!.phase, 'Completed', onStandby.status!.message);
    const pods = await ledger.pods();
    const primary = pods.find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary')!;
    assert.ok(primary, 'a primary pod');
    assert.notEqual(onStandby.status!.member, primary.metadata!.name, 'not on the primary');
    assert.match(onStandby.status!.member!, /^ledger-\d$/);
    assert.match(onStandby.status!.label!, /^\d{8}-\d{6}F$/);
    // Retention keeps one full backup: the first one's set is gone, and its object says so.
    const expired = await eventually('ledger-initial Expired', async () => {
      const b = await readBackup('ledger-initial');
      return b?.status?.phase === 'Expired' ? b : undefined;
    }, 60_000);
    assert.match(expired.status!.message!, /^removed from repository 1 by the retention policy \(spec\.backup\.retention\)/);
    assert.equal(expired.status!.label, initial.status!.label, 'the label stays as a record');
    // The CA key appears in no log or status file of the stand-in (pods, operator, agents).
    const keyLine = Buffer.from(secret.data!['ca.key']!, 'base64').toString().split('\n')[1]!;
    for (const file of filesUnder(dir)) assert.ok(!readFileSync(file, 'utf8').includes(keyLine), `the CA key leaked into ${file}`);
  });

  it('with no standby streaming, a requested backup runs on the primary', async () => {
    const raw = (await api.readCluster(ns, 'ledger'))!;
    await api.replaceCluster({ ...raw, spec: { ...(raw.spec as Record<string, unknown>), instances: 1 } });
    await ledger.healthyWith(1, 150_000);
    const primary = (await ledger.pods()).find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary')!;
    await api.createBackup(ns, { apiVersion: 'keelson.io/v1', kind: 'Backup', metadata: { name: 'ledger-alone', namespace: ns }, spec: { cluster: 'ledger', type: 'incr' } });
    const alone = await finished('ledger-alone');
    assert.equal(alone.status!.phase, 'Completed', alone.status!.message);
    assert.equal(alone.status!.member, primary.metadata!.name);
  });
});
