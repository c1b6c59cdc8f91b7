import type { V1Secret } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import { createCertificateAuthority } from '../../lib/tls-certificates.js';
import { buildCaSecret, readCaSecret } from '../builders/ca-secret.js';
import type { BuildContext } from '../builders/context.js';
import { Labels } from '../../api/naming.js';
import { defaultCaRotation, nextCaStep, type CaSecretData } from './backup-ca-rotation.js';
import type { ReconcileDeps } from './deps.js';

/** Which operator CA a Secret holds: its name, owned-kind label, names in messages and Events. */
export interface CaSecretKind {
  secretName: string;
  component: string;
  /** The CA certificate's common name. */
  caName: string;
  stagedAnnotation: string;
  /** The CA as messages name it ("backup TLS CA"). */
  what: string;
  /** Prefix of the Events' reasons: <prefix>Staged, <prefix>Rotated, <prefix>Pruned. */
  eventPrefix: string;
  /** A rotation asked for on demand: a value not yet recorded under `annotation` on the Secret starts one. */
  request?: { annotation: string; value: string | undefined };
}

/** The request's annotation on a Secret this pass writes: a request is honoured once. */
function requestAnnotations(kind: CaSecretKind): Record<string, string> {
  return kind.request?.value ? { [kind.request.annotation]: kind.request.value } : {};
}

/**
 * A CA Secret generated when missing and rotated before it expires (two steps, see
 * backup-ca-rotation.ts); the CA it holds after this pass. A Secret the operator did not make is
 * left alone (a user may bring their own CA in it). The key never leaves the Secret: not logged,
 * not in an Event.
 */
export async function ensureCaSecret(
  deps: Pick<ReconcileDeps, 'api' | 'events' | 'recordWrite' | 'now' | 'caTrustPropagationMs'>,
  ctx: BuildContext,
  kind: CaSecretKind,
): Promise<CaSecretData | undefined> {
  const placeholder = buildCaSecret(ctx, kind.secretName, kind.component, { cert: '', key: '' }, kind.stagedAnnotation);
  const stored = (await deps.api.read(placeholder)) as V1Secret | undefined;
  if (!stored) {
    const ca = createCertificateAuthority(kind.caName);
    const created = buildCaSecret(ctx, kind.secretName, kind.component, ca, kind.stagedAnnotation);
    // A CA made now answers a request already on the cluster.
    created.metadata = { ...created.metadata, annotations: { ...created.metadata?.annotations, ...requestAnnotations(kind) } };
    deps.recordWrite('Secret', 'create');
    try {
      await deps.api.create(created);
    } catch (error) {
      if (apiStatusCode(error) !== 409) throw error;
      return undefined; // another writer made it first: the next pass reads theirs
    }
    await deps.events.record(ctx.cluster.metadata, 'Normal', 'CreatedSecret', `generated the ${kind.what} in ${kind.secretName}`);
    return ca;
  }
  const current = readCaSecret(stored, kind.stagedAnnotation);
  if (!current || stored.metadata?.labels?.[Labels.owned] !== kind.component) return current;
  const requested = !!kind.request?.value && stored.metadata?.annotations?.[kind.request.annotation] !== kind.request.value;
  const policy = { ...defaultCaRotation, propagationMs: deps.caTrustPropagationMs ?? defaultCaRotation.propagationMs };
  const step = nextCaStep(current, deps.now?.() ?? new Date(), () => createCertificateAuthority(kind.caName), policy, kind.what, requested);
  if (step.kind === 'none') return current;
  const next = buildCaSecret(ctx, kind.secretName, kind.component, step.data, kind.stagedAnnotation);
  const { [kind.stagedAnnotation]: _staged, ...otherAnnotations } = stored.metadata?.annotations ?? {};
  // The read's resourceVersion: a concurrent writer makes this replace fail and the next pass decide again.
  // A request is recorded by the step it starts or, when one was under way, by the switch that ends it.
  next.metadata = {
    ...stored.metadata,
    annotations: { ...otherAnnotations, ...next.metadata?.annotations, ...(requested && step.kind !== 'prune' ? requestAnnotations(kind) : {}) },
  };
  deps.recordWrite('Secret', 'update');
  await deps.api.replace(next);
  await deps.events.record(
    ctx.cluster.metadata,
    'Normal',
    `${kind.eventPrefix}${step.kind === 'prune' ? 'Pruned' : step.kind === 'stage' ? 'Staged' : 'Rotated'}`,
    step.message,
  );
  return step.data;
}
