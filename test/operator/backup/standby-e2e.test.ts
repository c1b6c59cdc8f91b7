import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { createCertificateAuthority, pemCertificates } from '../../../lib/tls-certificates.js';
import { backupCaStagedAnnotation } from '../../../api/naming.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { defaultCaRotation } from '../../../operator/reconcile/backup-ca-rotation.js';
import type { BackupObject } from '../../../api/crd/backup-kind.js';
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

/** Members' pgBackRest server certificates (`…/tls/server.crt`) under the stand-in's folders. */
function certificatesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return certificatesUnder(path);
    // A member's backup TLS folder (server.crt beside client.crt); PostgreSQL's own tls folder
    // holds a server.crt too, signed by the cluster CA, and has no client.crt.
    return entry.name === 'server.crt' && dir.endsWith('/tls') && existsSync(join(dir, 'client.crt')) ? [path] : [];
  });
}

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
  /** The Backup once Completed or Failed; past the wait, the error says where it stood and what the cluster said. */
  const finished = async (name: string) => {
    let seen: BackupObject | undefined;
    try {
      return await eventually(
        `${name} finished`,
        async () => {
          seen = await readBackup(name);
          return seen?.status?.phase === 'Completed' || seen?.status?.phase === 'Failed' ? seen : undefined;
        },
        180_000,
      );
    } catch (error) {
      const events = (await api.core.listNamespacedEvent({ namespace: ns })).items.map((e) => `${e.reason}: ${e.message}`).slice(-15);
      throw new Error(
        `${(error as Error).message}; last status ${JSON.stringify(seen?.status)}; cluster ${await ledger.describe()}; events:\n${events.join('\n')}`,
        { cause: error },
      );
    }
  };

  before(async () => {
    // A kubelet's propagation time: the rotation test sees each step, and moves the staging time back itself.
    e2e = await startE2eStack('e2e-backup-standby', { logger, ipPrefix: '127.0.54', caTrustPropagationMs: defaultCaRotation.propagationMs });
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
      backup: {
        repositories: [{ name: 'local', volume: { size: '1Gi' } }],
        schedules: { immediate: true },
        retention: { fullCount: 1 },
        target: 'prefer-standby',
      },
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
    await api.createBackup(ns, {
      apiVersion: 'keelson.io/v1',
      kind: 'Backup',
      metadata: { name: 'ledger-standby', namespace: ns },
      spec: { cluster: 'ledger', type: 'full' },
    });
    const onStandby = await finished('ledger-standby');
    assert.equal(onStandby.status!.phase, 'Completed', onStandby.status!.message);
    const pods = await ledger.pods();
    const primary = pods.find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary')!;
    assert.ok(primary, 'a primary pod');
    assert.notEqual(onStandby.status!.member, primary.metadata!.name, 'not on the primary');
    assert.match(onStandby.status!.member!, /^ledger-\d$/);
    assert.match(onStandby.status!.label!, /^\d{8}-\d{6}F$/);
    // Retention keeps one full backup: the first one's set is gone, and its object says so.
    const expired = await eventually(
      'ledger-initial Expired',
      async () => {
        const b = await readBackup('ledger-initial');
        return b?.status?.phase === 'Expired' ? b : undefined;
      },
      60_000,
    );
    assert.match(expired.status!.message!, /^removed from repository 1 by the retention policy \(spec\.backup\.retention\)/);
    assert.equal(expired.status!.label, initial.status!.label, 'the label stays as a record');
    // The CA key appears in no log or status file of the stand-in (pods, operator, agents).
    const keyLine = Buffer.from(secret.data!['ca.key']!, 'base64').toString().split('\n')[1]!;
    for (const file of filesUnder(dir)) assert.ok(!readFileSync(file, 'utf8').includes(keyLine), `the CA key leaked into ${file}`);
  });

  it('the backup CA rotates under running members: each step reaches their volumes and a backup on the standby works after it', async () => {
    const secretName = 'ledger-backup-tls';
    const read = () => api.core.readNamespacedSecret({ namespace: ns, name: secretName });
    const decoded = (secret: V1Secret, key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
    const memberCerts = () => certificatesUnder(dir).map((path) => new X509Certificate(readFileSync(path)));
    const signedBy = (ca: X509Certificate) => () => {
      const certs = memberCerts();
      return certs.length >= 2 && certs.every((cert) => cert.verify(ca.publicKey)) ? certs : undefined;
    };
    const reasons = async () =>
      new Set((await api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.involvedObject.name === 'ledger').map((e) => e.reason));
    // A CA near its end, in the operator's own Secret (as after ten years): the operator must rotate it.
    const ending = createCertificateAuthority('ledger.default.backup.keelson.io', 60);
    const stored = await read();
    await api.core.replaceNamespacedSecret({
      namespace: ns,
      name: secretName,
      body: { ...stored, data: { 'ca.crt': Buffer.from(ending.cert).toString('base64'), 'ca.key': Buffer.from(ending.key).toString('base64') } },
    });
    await eventually('members re-issued from the replaced CA', async () => signedBy(new X509Certificate(ending.cert))(), 120_000);
    // Step 1: a new CA is trusted, the ending one still signs.
    const staged = await eventually(
      'the next CA staged',
      async () => {
        const secret = await read();
        return decoded(secret, 'next.key') ? secret : undefined;
      },
      90_000,
    );
    assert.ok((await reasons()).has('BackupCaStaged'));
    const next = new X509Certificate(decoded(staged, 'next.crt'));
    assert.equal(pemCertificates(decoded(staged, 'ca.crt')).length, 2, 'the bundle holds the ending and the next CA');
    // Step 2 follows the propagation time; as if it had passed, the staging time moves back four minutes.
    const earlier = new Date(Date.now() - 4 * 60_000).toISOString();
    await api.core.replaceNamespacedSecret({
      namespace: ns,
      name: secretName,
      body: { ...staged, metadata: { ...staged.metadata, annotations: { ...staged.metadata?.annotations, [backupCaStagedAnnotation]: earlier } } },
    });
    await eventually(
      'the next CA signs',
      async () => {
        const secret = await read();
        return !decoded(secret, 'next.key') && new X509Certificate(pemCertificates(decoded(secret, 'ca.crt'))[0]!).fingerprint256 === next.fingerprint256
          ? secret
          : undefined;
      },
      90_000,
    );
    assert.ok((await reasons()).has('BackupCaRotated'));
    // The node refreshes the mounted Secret and the members re-issue from the new CA without a restart.
    await eventually('members re-issued from the rotated CA', async () => signedBy(next)(), 120_000);
    await api.createBackup(ns, {
      apiVersion: 'keelson.io/v1',
      kind: 'Backup',
      metadata: { name: 'ledger-rotated', namespace: ns },
      spec: { cluster: 'ledger', type: 'incr' },
    });
    const rotated = await finished('ledger-rotated');
    assert.equal(rotated.status!.phase, 'Completed', rotated.status!.message);
    const primary = (await ledger.pods()).find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary')!;
    assert.notEqual(rotated.status!.member, primary.metadata!.name, 'on the standby, over TLS with the new certificates');
  });

  it('with no standby streaming, a requested backup runs on the primary', async () => {
    const raw = (await api.readCluster(ns, 'ledger'))!;
    await api.replaceCluster({ ...raw, spec: { ...(raw.spec as Record<string, unknown>), instances: 1 } });
    await ledger.healthyWith(1, 150_000);
    const primary = (await ledger.pods()).find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary')!;
    await api.createBackup(ns, {
      apiVersion: 'keelson.io/v1',
      kind: 'Backup',
      metadata: { name: 'ledger-alone', namespace: ns },
      spec: { cluster: 'ledger', type: 'incr' },
    });
    const alone = await finished('ledger-alone');
    assert.equal(alone.status!.phase, 'Completed', alone.status!.message);
    assert.equal(alone.status!.member, primary.metadata!.name);
  });
});
