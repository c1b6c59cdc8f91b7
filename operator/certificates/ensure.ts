import type { V1Secret } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import type { CertificateField } from '../../api/crd/certificates-types.js';
import type { Condition } from '../../api/crd/types.js';
import type { BuildContext } from '../builders/context.js';
import { credentialUsername } from '../builders/secrets.js';
import { buildTlsSecret, readTlsSecret, tlsSecretName, type MountedTlsSecret } from '../builders/tls-secrets.js';
import { clusterCaStagedAnnotation, names, rotateCaAnnotation, rotateCertificatesAnnotation } from '../../api/naming.js';
import { ensureCaSecret } from '../reconcile/ca-secret.js';
import type { ReconcileDeps } from '../reconcile/deps.js';
import { syncConnectionSecrets } from './connection-secrets.js';
import { needsOperatorCa, planCertificates, type CertificateProblem, type TlsSecretContent } from './plan.js';

/**
 * The reconcile step for the cluster's TLS material: the operator's CA (when a CA is not the
 * user's), then the two Secrets pods mount, issued or copied (plan.ts). Problems go to the
 * CertificatesReady condition and, when they change, to Warning Events naming the field.
 */

export const CertificatesReadyCondition = 'CertificatesReady';

export interface CertificatesVerdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
  problems: CertificateProblem[];
}

const fields: CertificateField[] = ['serverCASecret', 'serverTLSSecret', 'clientCASecret', 'replicationTLSSecret'];

function secretRef(namespace: string, name: string): V1Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } };
}

async function writeTlsSecret(
  deps: Pick<ReconcileDeps, 'api' | 'recordWrite'>,
  ctx: BuildContext,
  which: MountedTlsSecret,
  content: TlsSecretContent,
  stored: V1Secret | undefined,
): Promise<void> {
  const next = buildTlsSecret(ctx, which, content);
  if (!stored) {
    deps.recordWrite('Secret', 'create');
    await deps.api.create(next).catch((error: unknown) => {
      if (apiStatusCode(error) !== 409) throw error;
    });
    return;
  }
  // The read's resourceVersion: a concurrent writer makes this replace fail and the next pass decide again.
  const { [rotateCertificatesAnnotation]: _issuedFor, ...otherAnnotations } = stored.metadata?.annotations ?? {};
  next.metadata = {
    ...stored.metadata,
    ...next.metadata,
    annotations: { ...otherAnnotations, ...next.metadata?.annotations },
    resourceVersion: stored.metadata?.resourceVersion,
  };
  deps.recordWrite('Secret', 'update');
  await deps.api.replace(next);
}

export async function ensureCertificates(
  deps: Pick<ReconcileDeps, 'api' | 'events' | 'recordWrite' | 'now' | 'caTrustPropagationMs'>,
  ctx: BuildContext,
): Promise<CertificatesVerdict> {
  const { cluster } = ctx;
  const { name, namespace } = cluster.metadata;
  const spec = cluster.spec.certificates;
  const caKind = {
    secretName: names(name).caSecret,
    component: 'cluster-ca',
    caName: `${name}.${namespace}.keelson.io`,
    stagedAnnotation: clusterCaStagedAnnotation,
    what: 'cluster CA',
    eventPrefix: 'ClusterCa',
    request: { annotation: rotateCaAnnotation, value: cluster.metadata.annotations?.[rotateCaAnnotation] },
  };
  const operatorCa = needsOperatorCa(spec) ? await ensureCaSecret(deps, ctx, caKind) : undefined;
  const userSecrets: Partial<Record<CertificateField, V1Secret>> = {};
  for (const field of fields) {
    const secretName = spec[field];
    const found = secretName === undefined ? undefined : await deps.api.read(secretRef(namespace, secretName));
    if (found) userSecrets[field] = found;
  }
  const storedServer = await deps.api.read(secretRef(namespace, tlsSecretName(name, 'server')));
  const storedReplication = await deps.api.read(secretRef(namespace, tlsSecretName(name, 'replication')));
  const server = readTlsSecret(storedServer);
  const replication = readTlsSecret(storedReplication);
  const plan = planCertificates({
    clusterName: name,
    namespace,
    replicationRole: credentialUsername(ctx, 'replication'),
    spec,
    ...(operatorCa ? { operatorCa } : {}),
    userSecrets,
    stored: { ...(server ? { server } : {}), ...(replication ? { replication } : {}) },
    ...(cluster.metadata.annotations?.[rotateCertificatesAnnotation] ? { rotationRequest: cluster.metadata.annotations[rotateCertificatesAnnotation] } : {}),
    now: deps.now?.() ?? new Date(),
  });
  if (plan.server) await writeTlsSecret(deps, ctx, 'server', plan.server, storedServer);
  const trust = plan.server?.trust ?? server?.trust;
  if (trust) await syncConnectionSecrets(deps, ctx, trust);
  if (plan.replication) await writeTlsSecret(deps, ctx, 'replication', plan.replication, storedReplication);
  for (const line of plan.issued) await deps.events.record(cluster.metadata, 'Normal', 'CertificateIssued', line);
  if (plan.problems.length)
    return { status: 'False', reason: 'SecretRefused', message: plan.problems.map((p) => p.message).join('; '), problems: plan.problems };
  return { status: 'True', reason: 'Ready', message: 'server and replication certificates are in place', problems: [] };
}

/** The condition, its transition time kept while its status holds. */
export function certificatesCondition(verdict: CertificatesVerdict, previous: Condition | undefined, generation: number | undefined, now: Date): Condition {
  const lastTransitionTime = previous && previous.status === verdict.status ? previous.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    type: CertificatesReadyCondition,
    status: verdict.status,
    reason: verdict.reason,
    message: verdict.message.slice(0, 1000),
    lastTransitionTime,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** One Warning Event per problem that the previous condition did not already report. */
export async function reportCertificateProblems(
  deps: Pick<ReconcileDeps, 'events'>,
  ctx: BuildContext,
  verdict: CertificatesVerdict,
  previous: Condition | undefined,
): Promise<void> {
  for (const problem of verdict.problems) {
    if (previous?.status === 'False' && previous.message.includes(problem.message)) continue;
    await deps.events.record(ctx.cluster.metadata, 'Warning', 'CertificateRefused', problem.message);
  }
}
