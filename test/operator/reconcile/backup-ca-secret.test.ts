import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Secret } from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { createCertificateAuthority, pemCertificates } from '../../../lib/tls-certificates.js';
import { EventRecorder } from '../../../operator/events.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { ensureBackupTlsSecret } from '../../../operator/reconcile/owned.js';
import { startCrdApiServer, type CrdApiServer } from '../crd-api-server.js';

/** The operator's side of the backup CA rotation against the stand-in's API server: create, stage, switch, leave a user's CA alone. */
describe('backup TLS CA Secret: created, then rotated before it expires', { timeout: 60_000 }, () => {
  let stand: CrdApiServer;
  let api: OperatorKubeApi;
  const logger = createLogger({ name: 'ca-secret', level: 'silent' });
  const ns = 'default';
  const decode = (secret: V1Secret, key: string): string | undefined => (secret.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString() : undefined);
  /** A stored DatabaseCluster (the Secret's owner: the garbage collector removes what an absent owner owns). */
  const ctxFor = async (name: string) => {
    const backup = { repositories: [{ name: 'local', volume: { size: '1Gi' } }], target: 'prefer-standby' };
    return { cluster: await stand.createCluster(name, { backup }), operatorVersion: '1.0.0' };
  };
  const read = (name: string) => api.core.readNamespacedSecret({ namespace: ns, name });
  /** The operator's Secret now holds a CA twenty days from its end (as an old cluster's would). */
  const replaceWithEndingCa = async (stored: V1Secret, cluster: string) => {
    const ending = createCertificateAuthority(`${cluster}.default.backup.keelson.io`, 20);
    await api.core.replaceNamespacedSecret({
      namespace: ns,
      name: `${cluster}-backup-tls`,
      body: { ...stored, data: { 'ca.crt': Buffer.from(ending.cert).toString('base64'), 'ca.key': Buffer.from(ending.key).toString('base64') } },
    });
    return ending;
  };
  const reasons = async () => (await api.core.listNamespacedEvent({ namespace: ns })).items.map((e) => e.reason);

  before(async () => {
    stand = await startCrdApiServer(logger, ns);
    api = stand.api;
  });
  after(async () => {
    await stand?.close();
  });

  it('creates a ten-year CA, stages a new one within the renewal window, switches after the propagation time', async () => {
    let now = new Date();
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined, now: () => now };
    const ctx = await ctxFor('shop');
    await ensureBackupTlsSecret(deps, ctx);
    const created = await read('shop-backup-tls');
    assert.equal(pemCertificates(decode(created, 'ca.crt')!).length, 1);
    await ensureBackupTlsSecret(deps, ctx);
    assert.equal((await read('shop-backup-tls')).metadata!.resourceVersion, created.metadata!.resourceVersion, 'a CA far from its end is left alone');

    // A CA twenty days from its end (as an old cluster would have).
    const old = await replaceWithEndingCa(created, 'shop');
    await ensureBackupTlsSecret(deps, ctx);
    const staged = await read('shop-backup-tls');
    assert.equal(decode(staged, 'ca.key'), old.key, 'the old CA still signs');
    const bundle = pemCertificates(decode(staged, 'ca.crt')!);
    assert.equal(bundle.length, 2);
    assert.equal(bundle[1]!.trim(), decode(staged, 'next.crt')!.trim());
    assert.ok(staged.metadata!.annotations!['keelson.io/backup-ca-staged-at']);
    assert.ok((await reasons()).includes('BackupCaStaged'));

    await ensureBackupTlsSecret(deps, ctx);
    assert.equal((await read('shop-backup-tls')).metadata!.resourceVersion, staged.metadata!.resourceVersion, 'no switch before the kubelets refreshed');
    now = new Date(now.getTime() + 4 * 60_000);
    await ensureBackupTlsSecret(deps, ctx);
    const switched = await read('shop-backup-tls');
    assert.equal(decode(switched, 'ca.key'), decode(staged, 'next.key'));
    assert.deepEqual(
      pemCertificates(decode(switched, 'ca.crt')!).map((c) => c.trim()),
      [decode(staged, 'next.crt')!.trim(), old.cert.trim()],
    );
    assert.equal(decode(switched, 'next.key'), undefined);
    assert.equal(switched.metadata!.annotations?.['keelson.io/backup-ca-staged-at'], undefined);
    assert.equal(switched.metadata!.labels!['keelson.io/owned-kind'], 'backup-tls');
    assert.ok((await reasons()).includes('BackupCaRotated'));
  });

  it("switches after the operator's own propagation time (--ca-trust-propagation), not the default's", async () => {
    let now = new Date();
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined, now: () => now, caTrustPropagationMs: 20_000 };
    const ctx = await ctxFor('quick');
    await ensureBackupTlsSecret(deps, ctx);
    const created = await read('quick-backup-tls');
    await replaceWithEndingCa(created, 'quick');
    await ensureBackupTlsSecret(deps, ctx);
    const staged = await read('quick-backup-tls');
    assert.ok(decode(staged, 'next.key'), 'staged');
    now = new Date(now.getTime() + 10_000);
    await ensureBackupTlsSecret(deps, ctx);
    assert.equal((await read('quick-backup-tls')).metadata!.resourceVersion, staged.metadata!.resourceVersion, 'trusted only, 10 s in');
    now = new Date(now.getTime() + 11_000);
    await ensureBackupTlsSecret(deps, ctx);
    assert.equal(decode(await read('quick-backup-tls'), 'ca.key'), decode(staged, 'next.key'), 'the new CA signs 21 s in');
  });

  it('leaves a CA the user brought alone, even near its end', async () => {
    const mine = createCertificateAuthority('my-own-ca', 5);
    await api.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'own-backup-tls', namespace: ns },
        data: { 'ca.crt': Buffer.from(mine.cert).toString('base64'), 'ca.key': Buffer.from(mine.key).toString('base64') },
      },
    });
    const before = await read('own-backup-tls');
    await ensureBackupTlsSecret({ api, events: new EventRecorder(api.core, logger), recordWrite: () => undefined }, await ctxFor('own'));
    assert.equal((await read('own-backup-tls')).metadata!.resourceVersion, before.metadata!.resourceVersion);
  });
});
