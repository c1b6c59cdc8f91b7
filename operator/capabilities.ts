import type { V1APIGroupList } from '@kubernetes/client-node';

/**
 * What the API server serves, for the kinds whose API version differs between Kubernetes
 * releases or that only exist with an add-on: the operator uses the best version served and
 * leaves out a kind that is absent, saying so in status (condition ApiFallback) and an Event,
 * instead of failing the whole reconcile on a 404.
 */
export type PdbApiVersion = 'policy/v1' | 'policy/v1beta1';

export interface ServerCapabilities {
  /** PodDisruptionBudget version to write; undefined when the server serves neither. */
  podDisruptionBudget?: PdbApiVersion;
  /** monitoring.coreos.com/v1 ServiceMonitor is served (its CRD is installed). */
  serviceMonitor: boolean;
}

/** Everything current Kubernetes serves (what tests assume when they do not care). */
export const modernCapabilities: ServerCapabilities = { podDisruptionBudget: 'policy/v1', serviceMonitor: true };

/** `group/version` strings from `/apis` discovery. */
export function servedGroupVersions(list: V1APIGroupList): Set<string> {
  return new Set(list.groups.flatMap((g) => g.versions.map((v) => v.groupVersion)));
}

/** policy/v1 since Kubernetes 1.21; policy/v1beta1 until 1.25. */
export function choosePdbVersion(served: Set<string>): PdbApiVersion | undefined {
  const preferred: PdbApiVersion[] = ['policy/v1', 'policy/v1beta1'];
  return preferred.find((gv) => served.has(gv));
}

export function capabilitiesFrom(list: V1APIGroupList): ServerCapabilities {
  const served = servedGroupVersions(list);
  return { podDisruptionBudget: choosePdbVersion(served), serviceMonitor: served.has('monitoring.coreos.com/v1') };
}

/**
 * Human-readable notes on what a cluster gets less of than it asked for on this server; empty
 * when nothing falls back. Pure, so status and Events can compare them between passes.
 */
export function apiFallbacks(capabilities: ServerCapabilities, serviceMonitorWanted: boolean): string[] {
  const notes: string[] = [];
  if (capabilities.podDisruptionBudget === undefined) notes.push('PodDisruptionBudget not created: the server serves neither policy/v1 nor policy/v1beta1');
  else if (capabilities.podDisruptionBudget !== 'policy/v1')
    notes.push(`PodDisruptionBudget written as ${capabilities.podDisruptionBudget}: the server does not serve policy/v1`);
  if (serviceMonitorWanted && !capabilities.serviceMonitor)
    notes.push('ServiceMonitor not created: the monitoring.coreos.com/v1 API (Prometheus Operator CRDs) is not installed');
  return notes;
}
