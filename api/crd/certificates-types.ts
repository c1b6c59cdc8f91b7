import { z } from 'zod';
import { dnsLabel } from './schema-helpers.js';

/**
 * spec.certificates of the DatabaseCluster API: Secrets in cert-manager's shape (tls.crt, tls.key,
 * ca.crt) a user brings instead of the operator's own per-cluster CA. Every field is optional; an
 * unset one is made by the operator. The CEL rules are repeated in the refinement so servers
 * without CEL refuse the same specs. What the operator finds in the Secrets (missing, malformed,
 * expired, a key that does not match) is reported in the CertificatesReady condition, not here.
 */

const rules = [
  {
    rule: '!has(self.serverTLSSecret) || has(self.serverCASecret)',
    message: 'certificates.serverTLSSecret needs serverCASecret (the CA clients verify it with)',
  },
  {
    rule: '!has(self.replicationTLSSecret) || has(self.clientCASecret)',
    message: 'certificates.replicationTLSSecret needs clientCASecret (the CA PostgreSQL verifies it with)',
  },
];

export const certificatesSchema = z
  .object({
    serverCASecret: dnsLabel.optional().meta({
      description:
        'Secret whose ca.crt clients verify the server with; with ca.key as well (and no serverTLSSecret) the operator issues the server certificate from it.',
    }),
    serverTLSSecret: dnsLabel.optional().meta({
      description:
        "Secret (tls.crt, tls.key) with PostgreSQL's and the pooler's server certificate, signed by serverCASecret's CA; its subjectAltNames must cover the cluster's Services.",
    }),
    clientCASecret: dnsLabel.optional().meta({
      description:
        'Secret whose ca.crt PostgreSQL verifies client certificates with; with ca.key as well (and no replicationTLSSecret) the operator issues the replication client certificate from it.',
    }),
    replicationTLSSecret: dnsLabel.optional().meta({
      description:
        "Secret (tls.crt, tls.key) with the replication user's client certificate (common name = the replication role), signed by clientCASecret's CA.",
    }),
  })
  .superRefine((value, ctx) => {
    if (value.serverTLSSecret !== undefined && value.serverCASecret === undefined) ctx.addIssue({ code: 'custom', message: rules[0]!.message });
    if (value.replicationTLSSecret !== undefined && value.clientCASecret === undefined) ctx.addIssue({ code: 'custom', message: rules[1]!.message });
  })
  .meta({ description: 'User-provided TLS Secrets; the operator makes and rotates whatever is not given here.', 'x-kubernetes-validations': rules });

export type CertificatesSpec = z.infer<typeof certificatesSchema>;

/** The spec fields, as a status condition or an Event names them. */
export type CertificateField = keyof CertificatesSpec;
