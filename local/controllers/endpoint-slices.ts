/**
 * EndpointSlices (discovery.k8s.io/v1) for a Service, from the same subsets as its Endpoints, as
 * the EndpointSlice controller writes them: one slice per distinct port set, each endpoint with
 * ready/serving/terminating conditions, labelled with the Service's name and the manager's. A
 * Service that selects nothing keeps one empty slice.
 */
import type { V1EndpointAddress, V1EndpointSlice, V1EndpointSubset, V1Service } from '@kubernetes/client-node';

export const ServiceNameLabel = 'kubernetes.io/service-name';
export const ManagedByLabel = 'endpointslice.kubernetes.io/managed-by';
export const ManagedByLocal = 'endpoints-controller.keelson.io';

function endpoint(address: V1EndpointAddress, ready: boolean): V1EndpointSlice['endpoints'][number] {
  const result: V1EndpointSlice['endpoints'][number] = { addresses: [address.ip], conditions: { ready, serving: ready, terminating: false } };
  if (address.nodeName) result.nodeName = address.nodeName;
  if (address.hostname) result.hostname = address.hostname;
  if (address.targetRef) result.targetRef = address.targetRef;
  return result;
}

/** The slices for one Service, named `<service>-<n>`; pure. */
export function endpointSlicesFor(service: V1Service, subsets: V1EndpointSubset[]): V1EndpointSlice[] {
  const name = service.metadata?.name ?? '';
  const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}), [ServiceNameLabel]: name, [ManagedByLabel]: ManagedByLocal };
  if (service.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
  const ownerReferences = service.metadata?.uid
    ? [{ apiVersion: 'v1', kind: 'Service', name, uid: service.metadata.uid, controller: true, blockOwnerDeletion: true }]
    : undefined;
  const groups = subsets.length > 0 ? subsets : [{}];
  return groups.map((subset, index) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-${index}`, namespace: service.metadata?.namespace, labels, ownerReferences },
    addressType: 'IPv4',
    ports: (subset.ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    })),
    endpoints: [...(subset.addresses ?? []).map((a) => endpoint(a, true)), ...(subset.notReadyAddresses ?? []).map((a) => endpoint(a, false))],
  }));
}

/** What decides whether a slice must be written. */
export function sliceSignature(slice: V1EndpointSlice | undefined): string {
  if (!slice) return '';
  return JSON.stringify({
    labels: slice.metadata?.labels ?? {},
    ports: (slice.ports ?? []).map((p) => [p.name ?? '', p.port, p.protocol ?? 'TCP']),
    endpoints: (slice.endpoints ?? []).map((e) => [e.addresses, e.conditions?.ready ?? true, e.hostname ?? '', e.targetRef?.uid ?? '']),
  });
}
