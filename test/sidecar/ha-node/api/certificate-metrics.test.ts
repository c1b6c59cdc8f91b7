import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../../../lib/tls-certificates.js';
import { renderCertificateMetrics } from '../../../../sidecar/ha-node/api/certificate-metrics.js';

test('seconds until each installed certificate ends; an unreadable file is left out', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cert-metrics-'));
  try {
    const ca = createCertificateAuthority('ca', 100);
    writeFileSync(join(dir, 'server.crt'), issueCertificate(ca, 'shop-rw', { days: 10 }).cert);
    writeFileSync(join(dir, 'ca.crt'), ca.cert + createCertificateAuthority('next', 3650).cert);
    const now = new Date();
    const text = renderCertificateMetrics(
      [
        { certificate: 'server', path: join(dir, 'server.crt') },
        { certificate: 'server-ca', path: join(dir, 'ca.crt') },
        { certificate: 'replication', path: join(dir, 'missing.crt') },
      ],
      '{scope="shop",name="shop-0"}',
      now,
    );
    const value = (certificate: string) =>
      Number(new RegExp(`^ha_certificate_expiry_seconds\\{scope="shop",name="shop-0",certificate="${certificate}"\\} (-?\\d+)$`, 'm').exec(text)?.[1]);
    assert.ok(Math.abs(value('server') - 10 * 86400) < 120, text);
    assert.ok(Math.abs(value('server-ca') - 100 * 86400) < 120, 'the first CA of a bundle');
    assert.doesNotMatch(text, /replication/);
    assert.match(text, /^# TYPE ha_certificate_expiry_seconds gauge$/m);
    assert.equal(renderCertificateMetrics([], '{scope="shop",name="shop-0"}'), '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
