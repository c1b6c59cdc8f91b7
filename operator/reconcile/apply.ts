import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import { Annotations } from '../../api/naming.js';
import type { OperatorKubeApi } from '../kube-api.js';
import { hashOf } from './hash.js';

export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

export interface ApplyResult<T extends KubernetesObject> {
  outcome: ApplyOutcome;
  object: T;
}

/** Called for every write so /metrics can show that idle resyncs write nothing. */
export type WriteRecorder = (kind: string, verb: 'create' | 'update' | 'delete' | 'status') => void;

/** The desired object with its own hash recorded in an annotation. */
export function withSpecHash<T extends KubernetesObject>(desired: T): T {
  const hash = hashOf(desired);
  return { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata?.annotations, [Annotations.specHash]: hash } } };
}

/** True when the observed object already is what we would write (same hash, still ours). */
export function isUpToDate(desired: KubernetesObject, observed: KubernetesObject): boolean {
  const wanted = hashOf(desired);
  if (observed.metadata?.annotations?.[Annotations.specHash] !== wanted) return false;
  const owners = observed.metadata?.ownerReferences ?? [];
  const owner = desired.metadata?.ownerReferences?.[0];
  return !owner || owners.some((ref) => ref.uid === owner.uid);
}

/** Fields the API server allocates that a replace must carry over (Service cluster IPs). */
function carryAllocated<T extends KubernetesObject>(next: T, observed: KubernetesObject): T {
  if (next.kind !== 'Service') return next;
  const service = next as unknown as V1Service;
  const old = observed as V1Service;
  if (service.spec && old.spec?.clusterIP && service.spec.clusterIP === undefined) {
    service.spec = { ...service.spec, clusterIP: old.spec.clusterIP, clusterIPs: old.spec.clusterIPs };
  }
  return next;
}

/**
 * Creates the object when missing, replaces it when its hash differs, and does nothing otherwise.
 * Comparing our own hash (not the server's copy, which gains defaults) is what keeps an idle
 * resync at zero writes. Labels and annotations others added are kept on replace.
 */
export async function applyObject<T extends KubernetesObject>(api: OperatorKubeApi, desired: T, record: WriteRecorder): Promise<ApplyResult<T>> {
  const observed = await api.read(desired);
  const next = withSpecHash(desired);
  if (!observed) {
    record(desired.kind ?? 'unknown', 'create');
    return { outcome: 'created', object: await api.create(next) };
  }
  if (isUpToDate(desired, observed)) return { outcome: 'unchanged', object: observed };
  const merged = carryAllocated(
    {
      ...next,
      metadata: {
        ...next.metadata,
        resourceVersion: observed.metadata?.resourceVersion,
        labels: { ...observed.metadata?.labels, ...next.metadata?.labels },
        annotations: { ...observed.metadata?.annotations, ...next.metadata?.annotations },
      },
    },
    observed,
  );
  record(desired.kind ?? 'unknown', 'update');
  return { outcome: 'updated', object: await api.replace(merged) };
}
