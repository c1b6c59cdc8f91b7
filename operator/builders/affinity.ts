import type { V1Affinity, V1PodAntiAffinity } from '@kubernetes/client-node';
import type { DatabaseCluster } from '../../api/crd/types.js';
import { podSelector } from '../../api/naming.js';

const hostnameKey = 'kubernetes.io/hostname';

function antiAffinity(cluster: DatabaseCluster): V1PodAntiAffinity | undefined {
  const mode = cluster.spec.scheduling.podAntiAffinity;
  const term = { labelSelector: { matchLabels: podSelector(cluster.metadata.name) }, topologyKey: hostnameKey };
  if (mode === 'required') return { requiredDuringSchedulingIgnoredDuringExecution: [term] };
  if (mode === 'preferred') return { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }] };
  return undefined;
}

/** The user's affinity with our anti-affinity added, unless the user wrote their own podAntiAffinity. */
export function podAffinity(cluster: DatabaseCluster): V1Affinity | undefined {
  const user = cluster.spec.scheduling.affinity;
  const spread = antiAffinity(cluster);
  if (user?.podAntiAffinity || !spread) return user;
  return { ...(user ?? {}), podAntiAffinity: spread };
}
