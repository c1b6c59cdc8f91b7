/**
 * A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate, from the
 * shared signer (lib/tls-certificates.ts): ECDSA P-256 keys take milliseconds, and every test
 * starts a server.
 */
import { createCertificateAuthority, issueCertificate } from '../../../lib/tls-certificates.js';

export interface CertificateBundle {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Issues another client certificate from the same CA (the CN is the client's identity). */
  issueClient(commonName: string, organization?: string): { cert: string; key: string };
}

const tenYears = 3650;

/** Generates a CA, a server certificate for the given host names/IPs, and a client certificate (CN = user). */
export function generateCertificates(hosts: string[], clientUser = 'keelson-admin'): CertificateBundle {
  const ca = createCertificateAuthority('keelson-local-ca', tenYears);
  const server = issueCertificate(ca, 'keelson-apiserver', { usage: 'server', hosts, days: tenYears });
  const issueClient = (commonName: string, organization?: string): { cert: string; key: string } =>
    issueCertificate(ca, commonName, { usage: 'client', organization, days: tenYears });
  const admin = issueClient(clientUser, 'system:masters');
  return { caCert: ca.cert, serverCert: server.cert, serverKey: server.key, clientCert: admin.cert, clientKey: admin.key, issueClient };
}
