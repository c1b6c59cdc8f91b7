/**
 * Endpoints for a Service from its selector and pod readiness, as the endpoints controller does:
 * pods with an IP and not terminating; Ready pods in `addresses`, the rest in
 * `notReadyAddresses` (all in `addresses` when publishNotReadyAddresses); named targetPorts
 * resolve per pod, so pods resolving to different ports land in different subsets.
 */
import type { V1EndpointAddress, CoreV1EndpointPort, V1EndpointSubset, V1Endpoints, V1Pod, V1Service } from '@kubernetes/client-node';
import { isPodReady, isTerminating } from './pod-template.js';

export function selectsPod(service: V1Service, pod: V1Pod): boolean {
  const selector = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  if (pod.metadata?.namespace !== service.metadata?.namespace) return false;
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function resolveTargetPort(target: number | string | undefined, port: number, pod: V1Pod): number | undefined {
  if (target === undefined) return port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const container of pod.spec?.containers ?? []) {
    const found = container.ports?.find((p) => p.name === target);
    if (found) return found.containerPort;
  }
  return undefined;
}

function address(pod: V1Pod, service: V1Service): V1EndpointAddress {
  const result: V1EndpointAddress = {
    ip: pod.status?.podIP ?? '',
    nodeName: pod.spec?.nodeName,
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid },
  };
  if (pod.spec?.hostname && pod.spec.subdomain === service.metadata?.name) result.hostname = pod.spec.hostname;
  return result;
}

const byIp = (a: V1EndpointAddress, b: V1EndpointAddress): number => a.ip.localeCompare(b.ip, 'en', { numeric: true });

export function endpointSubsets(service: V1Service, pods: V1Pod[]): V1EndpointSubset[] {
  const publishNotReady = service.spec?.publishNotReadyAddresses === true;
  const groups = new Map<string, { ports: CoreV1EndpointPort[]; addresses: V1EndpointAddress[]; notReady: V1EndpointAddress[] }>();
  for (const pod of pods) {
    if (!selectsPod(service, pod) || !pod.status?.podIP || isTerminating(pod)) continue;
    if (pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
    const ports: CoreV1EndpointPort[] = [];
    for (const port of service.spec?.ports ?? []) {
      const resolved = resolveTargetPort(port.targetPort as number | string | undefined, port.port, pod);
      if (resolved === undefined) continue;
      ports.push({ name: port.name, port: resolved, protocol: port.protocol ?? 'TCP', appProtocol: port.appProtocol });
    }
    if ((service.spec?.ports ?? []).length > 0 && ports.length === 0) continue;
    const key = JSON.stringify(ports);
    let group = groups.get(key);
    if (!group) {
      group = { ports, addresses: [], notReady: [] };
      groups.set(key, group);
    }
    if (publishNotReady || isPodReady(pod)) group.addresses.push(address(pod, service));
    else group.notReady.push(address(pod, service));
  }
  return [...groups.values()].map((g) => {
    const subset: V1EndpointSubset = { ports: g.ports };
    if (g.addresses.length > 0) subset.addresses = g.addresses.sort(byIp);
    if (g.notReady.length > 0) subset.notReadyAddresses = g.notReady.sort(byIp);
    return subset;
  });
}

export function endpointsFor(service: V1Service, pods: V1Pod[]): V1Endpoints {
  const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
  if (service.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: service.metadata?.name, namespace: service.metadata?.namespace, labels },
    subsets: endpointSubsets(service, pods),
  };
}

/** What the controller compares to decide whether a write is needed. */
export function endpointsSignature(endpoints: V1Endpoints | undefined): string {
  if (!endpoints) return '';
  const subsets = (endpoints.subsets ?? []).map((s) => ({
    ports: (s.ports ?? []).map((p) => [p.name ?? '', p.port, p.protocol ?? 'TCP']),
    addresses: (s.addresses ?? []).map((a) => [a.ip, a.hostname ?? '', a.targetRef?.uid ?? '']),
    notReady: (s.notReadyAddresses ?? []).map((a) => [a.ip, a.hostname ?? '', a.targetRef?.uid ?? '']),
  }));
  return JSON.stringify({ labels: endpoints.metadata?.labels ?? {}, subsets });
}
