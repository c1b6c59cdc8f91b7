/**
 * Service proxy (our kube-proxy). Every Service that is neither headless nor ExternalName has a
 * loopback cluster IP (or, with pods in network namespaces, one of the node namespace's private
 * Service /24, which is local there; ADR 0355): normally the API server allocates it (the stand-in from its --service-cidr,
 * the node's own /24 in a local stack); if spec.clusterIP is still empty, the proxy picks a free address from the node's pool and writes
 * it into spec.clusterIP/clusterIPs through the API, so clients always read the address from the
 * Service as on a real cluster. Each TCP port then listens on clusterIP:port and forwards to the
 * ready addresses of the Service's Endpoints.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { WorkQueue, isNotFound, mergePatch, objectKey, splitKey, startInformer } from '../controllers/kube.js';
import type { AddressPool } from '../node/addresses.js';
import { PortForwarder, type Backend } from './forwarder.js';
import { ServiceNameLabel } from '../controllers/endpoint-slices.js';
import { servedSliceVersion, startSliceInformer } from './slice-source.js';

export interface ServiceProxyOptions {
  kubeConfig: k8s.KubeConfig;
  addresses: AddressPool;
  /**
   * Where backends may live. `loopback`: only 127.0.0.0/8, because from the host's own network
   * namespace any other address leaves the machine; `namespace`: the proxy runs inside the node
   * namespace that has no route out (checked when the node starts), so pod addresses are local.
   */
  backendScope?: 'loopback' | 'namespace';
  logger: Logger;
}

export interface ServiceProxy {
  /** clusterIP:port → backends (listening ports only), for tests and diagnostics. */
  snapshot(): Record<string, string[]>;
  close(): Promise<void>;
}

interface ServiceState {
  clusterIP: string;
  forwarders: Map<string, PortForwarder>;
}

/** Ready backends for one Service port: the Endpoints port with the same name (or the only one). */
export function backendsFor(endpoints: k8s.V1Endpoints | undefined, portName: string | undefined): Backend[] {
  const backends: Backend[] = [];
  for (const subset of endpoints?.subsets ?? []) {
    const ports = subset.ports ?? [];
    const port = ports.find((p) => (p.name ?? '') === (portName ?? '')) ?? (ports.length === 1 ? ports[0] : undefined);
    if (!port || (port.protocol ?? 'TCP') !== 'TCP') continue;
    for (const address of subset.addresses ?? []) backends.push({ ip: address.ip, port: port.port });
  }
  return backends;
}

/**
 * Ready backends for one Service port from its EndpointSlices (kube-proxy's source): endpoints
 * whose `ready` condition is not false, on the slice port with the same name (or the only one).
 */
export function backendsFromSlices(slices: k8s.V1EndpointSlice[], portName: string | undefined): Backend[] {
  const backends: Backend[] = [];
  const seen = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4') continue;
    const ports = slice.ports ?? [];
    const port = ports.find((p) => (p.name ?? '') === (portName ?? '')) ?? (ports.length === 1 ? ports[0] : undefined);
    if (!port?.port || (port.protocol ?? 'TCP') !== 'TCP') continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const ip of endpoint.addresses) {
        const key = `${ip}:${port.port}`;
        if (seen.has(key)) continue;
        seen.add(key);
        backends.push({ ip, port: port.port });
      }
    }
  }
  return backends;
}

export function isLoopback(ip: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/** The backends the proxy may connect to in its scope, and the ones it must refuse. */
export function splitBackends(backends: Backend[], scope: 'loopback' | 'namespace'): { allowed: Backend[]; refused: Backend[] } {
  if (scope === 'namespace') return { allowed: backends, refused: [] };
  return { allowed: backends.filter((b) => isLoopback(b.ip)), refused: backends.filter((b) => !isLoopback(b.ip)) };
}

export function proxiedPorts(service: k8s.V1Service): k8s.V1ServicePort[] {
  if (service.spec?.type === 'ExternalName' || service.spec?.clusterIP === 'None') return [];
  return (service.spec?.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP');
}

export async function startServiceProxy(options: ServiceProxyOptions): Promise<ServiceProxy> {
  const { kubeConfig, addresses } = options;
  const backendScope = options.backendScope ?? 'loopback';
  const logger = options.logger.child({ component: 'proxy' });
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const state = new Map<string, ServiceState>();

  async function teardown(key: string): Promise<void> {
    const current = state.get(key);
    if (!current) return;
    state.delete(key);
    await Promise.all([...current.forwarders.values()].map((f) => f.close()));
    addresses.release(current.clusterIP);
  }

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const service = services.get(name, namespace);
    const ports = service ? proxiedPorts(service) : [];
    if (!service || service.metadata?.deletionTimestamp || ports.length === 0) {
      await teardown(key);
      return;
    }
    const clusterIP = service.spec?.clusterIP;
    if (!clusterIP) {
      const ip = addresses.allocate('high');
      try {
        await core.patchNamespacedService({ name, namespace, body: { spec: { clusterIP: ip, clusterIPs: [ip] } } }, mergePatch);
        logger.info({ service: key, clusterIP: ip }, 'assigned cluster IP');
      } catch (err) {
        addresses.release(ip);
        if (!isNotFound(err)) throw err;
      }
      return; // the MODIFIED event brings us back with the address set
    }
    let current = state.get(key);
    if (current && current.clusterIP !== clusterIP) {
      await teardown(key);
      current = undefined;
    }
    if (!current) {
      // Only addresses that are local here: loopback ones, or the node namespace's Service /24 (the pool).
      if (!isLoopback(clusterIP) && !addresses.contains(clusterIP)) {
        logger.warn({ service: key, clusterIP }, "cluster IP is neither a loopback address nor in the node's Service range, not proxied");
        return;
      }
      // Addresses the API server allocated (outside our pool) are used as they are, like kube-proxy does.
      addresses.reserve(clusterIP);
      current = { clusterIP, forwarders: new Map() };
      state.set(key, current);
    }
    const endpoints = endpointsInformer.get(name, namespace);
    // EndpointSlices when the server has any for this Service, else the Endpoints object.
    const slices = (slicesInformer?.list(namespace) ?? []).filter((slice) => slice.metadata?.labels?.[ServiceNameLabel] === name);
    const backendsOf = (portName: string | undefined): Backend[] => {
      const { allowed, refused } = splitBackends(slices.length > 0 ? backendsFromSlices(slices, portName) : backendsFor(endpoints, portName), backendScope);
      if (refused.length > 0)
        logger.warn({ service: key, refused: refused.map((b) => b.ip) }, 'backend addresses outside loopback are not proxied from the host network');
      return allowed;
    };
    const wanted = new Set<string>();
    for (const port of ports) {
      const portKey = String(port.port);
      wanted.add(portKey);
      let forwarder = current.forwarders.get(portKey);
      if (!forwarder) {
        forwarder = new PortForwarder(clusterIP, port.port, logger);
        current.forwarders.set(portKey, forwarder);
      }
      await forwarder.setBackends(backendsOf(port.name));
    }
    for (const [portKey, forwarder] of current.forwarders) {
      if (wanted.has(portKey)) continue;
      current.forwarders.delete(portKey);
      await forwarder.close();
    }
  }

  const queue = new WorkQueue(reconcile, logger, 1000).hold();
  const queueSliceService = (slice: k8s.V1EndpointSlice): void => {
    const service = slice.metadata?.labels?.[ServiceNameLabel];
    if (service) queue.add(`${slice.metadata?.namespace}/${service}`);
  };
  const services = await startInformer(
    kubeConfig,
    '/api/v1/services',
    () => core.listServiceForAllNamespaces(),
    { onChange: (s) => queue.add(objectKey(s)) },
    logger,
  );
  // Keep addresses already written into Services away from pods.
  for (const service of services.list()) if (service.spec?.clusterIP) addresses.reserve(service.spec.clusterIP);
  const endpointsInformer = await startInformer(
    kubeConfig,
    '/api/v1/endpoints',
    () => core.listEndpointsForAllNamespaces(),
    { onChange: (e) => queue.add(objectKey(e)) },
    logger,
  );
  const sliceVersion = await servedSliceVersion(kubeConfig);
  const slicesInformer = sliceVersion ? await startSliceInformer(kubeConfig, sliceVersion, queueSliceService, logger) : undefined;
  logger.debug({ endpointSlices: sliceVersion ?? 'not served' }, 'reading EndpointSlices');
  queue.resume();

  return {
    snapshot() {
      const result: Record<string, string[]> = {};
      for (const entry of state.values()) {
        for (const forwarder of entry.forwarders.values()) {
          if (forwarder.listening) result[`${forwarder.host}:${forwarder.port}`] = forwarder.currentBackends.map((b) => `${b.ip}:${b.port}`);
        }
      }
      return result;
    },
    async close() {
      queue.stop();
      await Promise.all([services.stop(), endpointsInformer.stop(), slicesInformer?.stop()]);
      await queue.idle();
      await Promise.all([...state.keys()].map((key) => teardown(key)));
    },
  };
}
