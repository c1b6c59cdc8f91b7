/**
 * ha_certificate_expiry_seconds: seconds until each TLS certificate this member uses ends (the
 * server's and the replication client's, and the first CA of each trust bundle), read from the
 * installed files at scrape time. A file that cannot be read is left out, not reported as 0.
 */
import { readFileSync } from 'node:fs';
import { certificateNotAfter, pemCertificates } from '../../../lib/tls-certificates.js';

export interface CertificateFile {
  /** The certificate label value: server, replication, server-ca, client-ca. */
  certificate: string;
  path: string;
}

function notAfter(path: string): Date | undefined {
  try {
    const first = pemCertificates(readFileSync(path, 'utf8'))[0];
    return first ? certificateNotAfter(first) : undefined;
  } catch {
    return undefined;
  }
}

/** `labels` is the member's label set ({scope="…",name="…"}); the certificate label is added to it. */
export function renderCertificateMetrics(files: CertificateFile[], labels: string, now = new Date()): string {
  const samples = files.flatMap((file) => {
    const end = notAfter(file.path);
    return end
      ? [`ha_certificate_expiry_seconds${labels.slice(0, -1)},certificate="${file.certificate}"} ${Math.round((end.getTime() - now.getTime()) / 1000)}`]
      : [];
  });
  if (!samples.length) return '';
  return [
    '# HELP ha_certificate_expiry_seconds Seconds until the TLS certificate ends (negative: it has ended).',
    '# TYPE ha_certificate_expiry_seconds gauge',
    ...samples,
    '',
  ].join('\n');
}
