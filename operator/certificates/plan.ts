import type { V1Secret } from '@kubernetes/client-node';
import { issueCertificate, pemCertificates, type PemPair } from '../../lib/tls-certificates.js';
import type { CertificateField, CertificatesSpec } from '../../api/crd/certificates-types.js';
import type { CaSecretData } from '../reconcile/backup-ca-rotation.js';
import { renewalReason } from './renewal.js';
import { checkCaSecret, checkTlsSecret, type CaMaterial, type Checked } from './secret-material.js';
import { serverCertificateHosts } from './server-names.js';

/**
 * From what the operator read (its CA, the user's Secrets named in spec.certificates, the two
 * Secrets pods mount) to what it writes. A part whose source is broken keeps its stored copy and
 * is reported with the field that names it; nothing broken is ever written. Pure but for the
 * keys issueCertificate draws.
 */

/** Lifetime of the certificates the operator issues; they are renewed at two thirds of it. */
export const issuedCertificateDays = 90;

/** What one of the mounted Secrets holds (or should hold). */
export interface TlsSecretContent {
  pair: PemPair;
  /** The server CA bundle (ca.crt): what clients and replicas verify the server with. */
  trust: string;
  /** The client CA bundle (client-ca.crt, server Secret only): what PostgreSQL verifies client certificates with. */
  clientTrust?: string;
  /** The rotation request the operator issued this certificate for. */
  issuedFor?: string;
}

export interface CertificateInputs {
  clusterName: string;
  namespace: string;
  /** The replication role: the common name of the replication client certificate. */
  replicationRole: string;
  spec: CertificatesSpec;
  /** The operator's CA (after this pass's rotation step); undefined when the user brings both CAs. */
  operatorCa?: CaSecretData;
  /** The user's Secrets named in spec.certificates (a named field absent here was not found). */
  userSecrets: Partial<Record<CertificateField, V1Secret>>;
  stored: { server?: TlsSecretContent; replication?: TlsSecretContent };
  rotationRequest?: string;
  now: Date;
}

export interface CertificateProblem {
  field: CertificateField;
  message: string;
}

export interface CertificatePlan {
  /** Content to write; absent: leave the stored Secret as it is. */
  server?: TlsSecretContent;
  replication?: TlsSecretContent;
  problems: CertificateProblem[];
  /** One line per certificate issued, with why. */
  issued: string[];
}

export function needsOperatorCa(spec: CertificatesSpec): boolean {
  return spec.serverCASecret === undefined || spec.clientCASecret === undefined;
}

const fieldPath = (field: CertificateField): string => `spec.certificates.${field}`;

function resolveCa(inputs: CertificateInputs, field: 'serverCASecret' | 'clientCASecret', needKey: boolean): Checked<CaMaterial> {
  const name = inputs.spec[field];
  if (name === undefined) {
    if (!inputs.operatorCa) return { ok: false, problem: "the operator's CA is not available yet" };
    return { ok: true, value: { bundle: inputs.operatorCa.cert, key: inputs.operatorCa.key } };
  }
  return checkCaSecret(inputs.userSecrets[field], name, needKey, inputs.now);
}

interface LeafSource {
  userField: 'serverTLSSecret' | 'replicationTLSSecret';
  caField: 'serverCASecret' | 'clientCASecret';
  commonName: string;
  hosts: string[];
  usage: 'server' | 'client';
  label: string;
}

/** The leaf pair: the user's (checked) or the operator's (re-issued when renewalReason says so). */
function resolveLeaf(
  inputs: CertificateInputs,
  source: LeafSource,
  ca: CaMaterial,
  stored: TlsSecretContent | undefined,
  plan: CertificatePlan,
): PemPair | undefined {
  const userName = inputs.spec[source.userField];
  if (userName !== undefined) {
    const commonName = source.usage === 'client' ? source.commonName : undefined;
    const checked = checkTlsSecret(
      inputs.userSecrets[source.userField],
      userName,
      { trust: ca.bundle, trustField: fieldPath(source.caField), usage: source.usage, ...(commonName ? { commonName } : {}) },
      inputs.now,
    );
    if (!checked.ok) plan.problems.push({ field: source.userField, message: `${fieldPath(source.userField)}: ${checked.problem}` });
    return checked.ok ? checked.value : undefined;
  }
  const expectations = {
    signer: ca.bundle,
    commonName: source.commonName,
    hosts: source.hosts,
    requested: inputs.rotationRequest,
    issuedFor: stored?.issuedFor,
  };
  const reason = renewalReason(stored?.pair, expectations, inputs.now);
  if (!reason) return stored!.pair;
  const signer = { cert: pemCertificates(ca.bundle)[0]!, key: ca.key! };
  plan.issued.push(`issued the ${source.label} certificate (${reason})`);
  return issueCertificate(signer, source.commonName, { usage: source.usage, hosts: source.hosts, days: issuedCertificateDays });
}

const sameContent = (a: TlsSecretContent | undefined, b: TlsSecretContent): boolean =>
  !!a && a.pair.cert === b.pair.cert && a.pair.key === b.pair.key && a.trust === b.trust && a.clientTrust === b.clientTrust && a.issuedFor === b.issuedFor;

export function planCertificates(inputs: CertificateInputs): CertificatePlan {
  const plan: CertificatePlan = { problems: [], issued: [] };
  const { spec, stored } = inputs;
  const serverCa = resolveCa(inputs, 'serverCASecret', spec.serverTLSSecret === undefined);
  const clientCa = resolveCa(inputs, 'clientCASecret', spec.replicationTLSSecret === undefined);
  if (!serverCa.ok) plan.problems.push({ field: 'serverCASecret', message: `${fieldPath('serverCASecret')}: ${serverCa.problem}` });
  if (!clientCa.ok) plan.problems.push({ field: 'clientCASecret', message: `${fieldPath('clientCASecret')}: ${clientCa.problem}` });
  const issuedFor = (userField: CertificateField, previous: TlsSecretContent | undefined, pair: PemPair): string | undefined =>
    spec[userField] !== undefined ? undefined : pair === previous?.pair ? previous.issuedFor : inputs.rotationRequest;

  if (serverCa.ok) {
    const source: LeafSource = {
      userField: 'serverTLSSecret',
      caField: 'serverCASecret',
      commonName: `${inputs.clusterName}-rw`,
      hosts: serverCertificateHosts(inputs.clusterName, inputs.namespace),
      usage: 'server',
      label: 'server',
    };
    const pair = resolveLeaf(inputs, source, serverCa.value, stored.server, plan);
    const clientTrust = clientCa.ok ? clientCa.value.bundle : stored.server?.clientTrust;
    if (pair && clientTrust) {
      const content: TlsSecretContent = {
        pair,
        trust: serverCa.value.bundle,
        clientTrust,
        ...optional('issuedFor', issuedFor('serverTLSSecret', stored.server, pair)),
      };
      if (!sameContent(stored.server, content)) plan.server = content;
    }
  }
  if (clientCa.ok) {
    const source: LeafSource = {
      userField: 'replicationTLSSecret',
      caField: 'clientCASecret',
      commonName: inputs.replicationRole,
      hosts: [],
      usage: 'client',
      label: 'replication client',
    };
    const pair = resolveLeaf(inputs, source, clientCa.value, stored.replication, plan);
    const trust = serverCa.ok ? serverCa.value.bundle : stored.replication?.trust;
    if (pair && trust) {
      const content: TlsSecretContent = { pair, trust, ...optional('issuedFor', issuedFor('replicationTLSSecret', stored.replication, pair)) };
      if (!sameContent(stored.replication, content)) plan.replication = content;
    }
  }
  return plan;
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
