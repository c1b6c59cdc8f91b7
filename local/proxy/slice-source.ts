/**
 * Where the service proxy reads EndpointSlices from: discovery.k8s.io/v1 when the server serves
 * it, else discovery.k8s.io/v1beta1 (Kubernetes 1.17-1.20; 1.20 serves only that), else none
 * (the proxy then reads Endpoints only). The fields the proxy reads (addressType, ports,
 * endpoints[].addresses, endpoints[].conditions.ready and the service-name label) have the same
 * shape in both versions, so v1beta1 slices are handled as v1 ones.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { servedGroupVersions } from '../../operator/capabilities.js';
import { startInformer, type RunningInformer } from '../controllers/kube.js';

export type SliceVersion = 'discovery.k8s.io/v1' | 'discovery.k8s.io/v1beta1';

/** The best EndpointSlice version among the served `group/version`s; undefined when neither is. */
export function chooseSliceVersion(served: Set<string>): SliceVersion | undefined {
  const preferred: SliceVersion[] = ['discovery.k8s.io/v1', 'discovery.k8s.io/v1beta1'];
  return preferred.find((gv) => served.has(gv));
}

/** Asks the server's `/apis` discovery which EndpointSlice version it serves. */
export async function servedSliceVersion(kubeConfig: k8s.KubeConfig): Promise<SliceVersion | undefined> {
  return chooseSliceVersion(servedGroupVersions(await kubeConfig.makeApiClient(k8s.ApisApi).getAPIVersions()));
}

/** A watch cache of every EndpointSlice in the given version. */
export function startSliceInformer(
  kubeConfig: k8s.KubeConfig,
  version: SliceVersion,
  onChange: (slice: k8s.V1EndpointSlice) => void,
  logger: Logger,
): Promise<RunningInformer<k8s.V1EndpointSlice>> {
  const list: () => Promise<k8s.KubernetesListObject<k8s.V1EndpointSlice>> =
    version === 'discovery.k8s.io/v1'
      ? () => kubeConfig.makeApiClient(k8s.DiscoveryV1Api).listEndpointSliceForAllNamespaces()
      : () => k8s.KubernetesObjectApi.makeApiClient(kubeConfig).list<k8s.V1EndpointSlice>(version, 'EndpointSlice');
  return startInformer(kubeConfig, `/apis/${version}/endpointslices`, list, { onChange }, logger);
}
