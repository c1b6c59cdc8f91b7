import type { KubernetesObject, V1StatefulSet } from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { ensureCertificates, type CertificatesVerdict } from '../certificates/ensure.js';
import { desiredObjects } from '../builders/index.js';
import { buildCredentialSecret, credentialKindsOf } from '../builders/secrets.js';
import { applyObject } from './apply.js';
import { planScale, type Day2Step } from './day2.js';
import type { ReconcileDeps } from './deps.js';
import type { Observed } from './observe.js';
import { ensureBackupTlsSecret, ensureSecrets, growVolumes, useApiCredentials } from './owned.js';
import { removeUnwantedPoolerObjects } from './pooler-cleanup.js';
import { ensureSourceTlsSecret } from './source-tls.js';
import { build } from './refusals.js';
import { keepImmutableFields } from './storage.js';

/** The objects a pass built and applied, and the instance count it asked the StatefulSet for. */
export interface Applied {
  desired: KubernetesObject[];
  scale: { replicas: number; step: Day2Step };
  /** The StatefulSet as stored after the write. */
  statefulSet: V1StatefulSet | undefined;
  /** The cluster's TLS Secrets as this pass left them (CertificatesReady). */
  certificates: CertificatesVerdict;
}

/** Keeps one kind of owned object in step with the spec. */
type Applier<Input> = (deps: ReconcileDeps, seen: Observed, input: Input) => Promise<void>;

/** Owned objects the built ones depend on (credentials, the backup CA), kept first and in this order. */
const prerequisites: Applier<undefined>[] = [
  (deps, { ctx, replicaSource }) =>
    ensureSecrets(
      deps,
      ctx,
      replicaSource ? { replication: replicaSource.replication, ...(replicaSource.superuser ? { superuser: replicaSource.superuser } : {}) } : {},
    ),
  (deps, { ctx }) => ensureBackupTlsSecret(deps, ctx),
  (deps, { ctx, replicaSource }) => ensureSourceTlsSecret(deps, ctx, replicaSource?.tls),
  (deps, { ctx, pods }) => useApiCredentials(deps, ctx, pods),
];

/** Owned objects kept once the built ones are applied, in this order. */
const followUps: Applier<{ applied: Applied; log: Logger }>[] = [(deps, { ctx }) => growVolumes(deps, ctx.cluster), removePoolerLeftovers];

/** Every owned object of the cluster: the prerequisites and TLS Secrets, the built objects, then the follow-ups. */
export async function applyOwned(deps: ReconcileDeps, seen: Observed, log: Logger): Promise<Applied> {
  for (const apply of prerequisites) await apply(deps, seen, undefined);
  const certificates = await ensureCertificates(deps, seen.ctx);
  const applied = { ...(await applyBuilt(deps, seen, log)), certificates };
  for (const apply of followUps) await apply(deps, seen, { applied, log });
  return applied;
}

/** The objects the builders make (operator/builders/), applied concurrently: they do not depend on each other at the API level. */
async function applyBuilt(deps: ReconcileDeps, seen: Observed, log: Logger): Promise<Omit<Applied, 'certificates'>> {
  const { ctx, pods, primary } = seen;
  const { cluster } = ctx;
  const desired = build(() => desiredObjects(ctx, seen.capabilities));
  const observedSts = await deps.api.read(desired.find((object) => object.kind === 'StatefulSet') as V1StatefulSet);
  const scale = planScale(cluster, pods, primary, observedSts?.spec?.replicas);
  const results = await Promise.all(
    desired.map(async (object) => {
      if (object.kind === 'StatefulSet') {
        (object as V1StatefulSet).spec!.replicas = scale.replicas;
        object = keepImmutableFields(object as V1StatefulSet, observedSts);
      }
      const result = await applyObject(deps.api, object, deps.recordWrite);
      if (result.outcome !== 'unchanged') log.info({ kind: object.kind, name: object.metadata?.name, outcome: result.outcome }, 'applied');
      return { kind: object.kind, outcome: result.outcome, stored: result.object };
    }),
  );
  const applied = results.find((r) => r.kind === 'StatefulSet');
  if (applied?.outcome === 'updated' && observedSts?.spec?.replicas !== scale.replicas) {
    await deps.events.record(cluster.metadata, 'Normal', 'Scaling', `instances ${observedSts?.spec?.replicas ?? 0} → ${scale.replicas}`);
  }
  return { desired, scale, statefulSet: applied?.stored as V1StatefulSet | undefined };
}

async function removePoolerLeftovers(deps: ReconcileDeps, seen: Observed, { applied, log }: { applied: Applied; log: Logger }): Promise<void> {
  const { ctx, capabilities } = seen;
  const { name, namespace, uid } = ctx.cluster.metadata;
  const secrets = credentialKindsOf(ctx).map((which) => buildCredentialSecret(ctx, which, ''));
  const removed = await removeUnwantedPoolerObjects(deps, { name, namespace, uid }, [...applied.desired, ...secrets], capabilities.podDisruptionBudget);
  if (removed.length) {
    log.info({ removed }, 'removed pooler objects no longer wanted');
    await deps.events.record(ctx.cluster.metadata, 'Normal', 'PoolerRemoved', `removed ${removed.join(', ')}`);
  }
}
