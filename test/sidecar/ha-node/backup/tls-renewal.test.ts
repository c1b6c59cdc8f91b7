import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../../lib/log.js';
import { createCertificateAuthority } from '../../../../lib/tls-certificates.js';
import { caFingerprint, MemberTlsRenewal, renewalDue } from '../../../../sidecar/ha-node/backup/tls-renewal.js';
import { memberTlsFiles } from '../../../../sidecar/ha-node/backup/tls-server.js';

test('a member follows the mounted CA: new files after a switch, none when nothing changed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ca-renewal-'));
  try {
    const caFile = join(dir, 'ca.crt');
    const caKeyFile = join(dir, 'ca.key');
    const old = createCertificateAuthority('old-ca');
    writeFileSync(caFile, old.cert);
    writeFileSync(caKeyFile, old.key);
    const tls = { caFile, caKeyFile, port: 8432, checkSeconds: 30 };
    const files = memberTlsFiles({ root: dir } as Parameters<typeof memberTlsFiles>[0]);
    const renewal = new MemberTlsRenewal(tls, '10.0.0.7', files, undefined, createLogger({ name: 'test', level: 'silent' }));
    assert.equal(renewal.renewIfDue(), true, 'first issue');
    assert.equal(renewal.renewIfDue(), false, 'nothing changed');
    assert.ok(new X509Certificate(readFileSync(files.serverCert)).checkIssued(new X509Certificate(old.cert)));

    const next = createCertificateAuthority('new-ca');
    writeFileSync(caFile, next.cert + old.cert);
    writeFileSync(caKeyFile, next.key);
    assert.equal(renewalDue(undefined, caFingerprint(tls), undefined), true);
    assert.equal(renewal.renewIfDue(), true, 'a switched CA Secret');
    assert.ok(new X509Certificate(readFileSync(files.serverCert)).checkIssued(new X509Certificate(next.cert)));
    assert.equal(new X509Certificate(readFileSync(files.serverCert)).subject, 'CN=10.0.0.7');
    assert.equal(readFileSync(files.ca, 'utf8'), next.cert + old.cert, 'the member trusts the whole bundle');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
