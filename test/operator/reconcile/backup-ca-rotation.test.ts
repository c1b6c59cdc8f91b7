import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createCertificateAuthority, issueCertificate, pemCertificates, type PemPair } from '../../../lib/tls-certificates.js';
import { nextCaStep, type CaSecretData } from '../../../operator/reconcile/backup-ca-rotation.js';

const day = 24 * 3600_000;
const policy = { renewBeforeMs: 30 * day, propagationMs: 120_000 };

/** Whether a member certificate is trusted by a bundle (what pgBackRest's OpenSSL checks first). */
function trusted(bundle: string, cert: string): boolean {
  const leaf = new X509Certificate(cert);
  return pemCertificates(bundle).some((ca) => leaf.checkIssued(new X509Certificate(ca)) && leaf.verify(new X509Certificate(ca).publicKey));
}

test('a CA far from its end is left alone', () => {
  const ca = createCertificateAuthority('far', 3650);
  assert.equal(nextCaStep(ca, new Date(), () => assert.fail('no new CA'), policy).kind, 'none');
});

test('rotation stages, waits for the kubelets, switches; every member trusts every other at each step', () => {
  const old = createCertificateAuthority('demo.ns.backup.keelson.io', 20);
  const t0 = new Date();
  let made: PemPair | undefined;
  const stage = nextCaStep(old, t0, () => (made = createCertificateAuthority('demo.ns.backup.keelson.io')), policy);
  assert.equal(stage.kind, 'stage');
  assert.ok(made);
  const staged = (stage as { data: CaSecretData }).data;
  assert.equal(staged.key, old.key, 'the current CA still signs while the new one is only trusted');
  assert.deepEqual(
    pemCertificates(staged.cert).map((c) => c.trim()),
    [old.cert.trim(), made.cert.trim()],
  );
  assert.equal(staged.nextKey, made.key);

  // Not before every kubelet had time to mount the staged bundle.
  assert.equal(nextCaStep(staged, new Date(t0.getTime() + 60_000), () => assert.fail(), policy).kind, 'none');
  const switched = nextCaStep(staged, new Date(t0.getTime() + 121_000), () => assert.fail(), policy);
  assert.equal(switched.kind, 'switch');
  const after = (switched as { data: CaSecretData }).data;
  assert.equal(after.key, made.key);
  assert.equal(after.nextKey, undefined);
  assert.deepEqual(
    pemCertificates(after.cert).map((c) => c.trim()),
    [made.cert.trim(), old.cert.trim()],
  );

  // Members lag one step behind each other at most: certificates from any version are trusted by the bundles of its neighbours.
  const versions = [old, { cert: staged.cert, key: staged.key }, { cert: after.cert, key: after.key }];
  const certs = versions.map((v) => issueCertificate(v, '10.0.0.1').cert);
  for (let i = 0; i < versions.length; i += 1) {
    for (let j = Math.max(0, i - 1); j <= Math.min(versions.length - 1, i + 1); j += 1) {
      assert.ok(trusted(versions[j]!.cert, certs[i]!), `a certificate issued at step ${i} is trusted by a member at step ${j}`);
    }
  }
  // And the switched state is stable.
  assert.equal(nextCaStep(after, new Date(t0.getTime() + 200_000), () => assert.fail(), policy).kind, 'none');
});

test('an expired CA leaves the bundle', () => {
  const current = createCertificateAuthority('current', 3650);
  const expired = createCertificateAuthority('expired', 1);
  const step = nextCaStep({ cert: current.cert + expired.cert, key: current.key }, new Date(Date.now() + 2 * day), () => assert.fail(), policy);
  assert.equal(step.kind, 'prune');
  assert.deepEqual(pemCertificates((step as { data: CaSecretData }).data.cert).length, 1);
});
