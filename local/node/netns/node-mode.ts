/**
 * What `--network namespace` sets up before the node agent starts: checks (root, the tools, an
 * isolated namespace, an API server that pods can reach), the bridge, the pod and Service address
 * pools of the private /24s, and removal of namespaces a crashed run left.
 */
import type { Logger } from '../../../lib/log.js';
import { AddressPool } from '../addresses.js';
import { namespaceToolsMissing } from './isolation.js';
import { ensureNodeNetwork } from './node-network.js';
import { PodNetworks } from './pod-network.js';
import { nodeId, nodeSubnet, type NodeSubnet } from './subnet.js';

export type NetworkMode = 'loopback' | 'namespace';

export function parseNetworkMode(value: string): NetworkMode {
  if (value === 'loopback' || value === 'namespace') return value;
  throw new Error(`--network must be "loopback" or "namespace", got "${value}"`);
}

export interface NamespaceMode {
  subnet: NodeSubnet;
  network: PodNetworks;
  podAddresses: AddressPool;
  /** The Service /24 (local in the node namespace): what the service proxy listens on. */
  serviceAddresses: AddressPool;
  /** The node's address on the bridge: status.hostIP, hostNetwork pods. */
  hostIP: string;
}

export async function prepareNamespaceMode(options: { markerPrefix: string; podNetwork?: string; apiServer: URL; logger: Logger }): Promise<NamespaceMode> {
  if (process.getuid?.() !== 0) throw new Error('--network namespace needs root (network namespaces and veths)');
  const missing = await namespaceToolsMissing();
  if (missing.length > 0) throw new Error(`--network namespace needs ${missing.join(', ')} (Debian: iproute2, util-linux, nftables)`);
  const subnet = nodeSubnet(options.podNetwork);
  // Refuses (NotIsolatedError) before creating anything when this namespace has a way out.
  await ensureNodeNetwork(subnet);
  if (!options.apiServer.hostname.startsWith(`${subnet.prefix}.`)) {
    throw new Error(`--network namespace: pods cannot reach the API server at ${options.apiServer.host}; serve it on ${subnet.apiAddress} (the node bridge)`);
  }
  const network = new PodNetworks(nodeId(options.markerPrefix), subnet);
  const removed = await network.removeLeftovers();
  if (removed.length > 0) options.logger.info({ removed }, 'removed pod network namespaces left over by a previous run');
  return {
    subnet,
    network,
    podAddresses: new AddressPool(subnet.prefix, subnet.firstPod, subnet.lastPod, 'private'),
    serviceAddresses: new AddressPool(subnet.servicePrefix, 1, 254, 'private'),
    hostIP: subnet.nodeAddress,
  };
}
