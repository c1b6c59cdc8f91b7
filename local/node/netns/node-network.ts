/**
 * The node's side of namespace mode: inside an isolated namespace (checked first, before anything
 * is created), bring lo up and create the bridge that pods' veths join, holding the node address
 * and the API server's address of the subnet, and make the whole Service /24 local (an AnyIP route
 * on lo, as kube-proxy's IPVS mode puts cluster IPs on a dummy link): the service proxy binds any
 * cluster IP without adding addresses, and pods reach it through the node. Idempotent, so the stack
 * and the agent may both call it.
 */
import { ip, ipJson } from './commands.js';
import { assertIsolated } from './isolation.js';
import { bridgeName, type NodeSubnet } from './subnet.js';

interface AddressFact {
  ifname: string;
  addr_info?: Array<{ family: string; local: string }>;
}

export async function ensureNodeNetwork(subnet: NodeSubnet): Promise<void> {
  await assertIsolated();
  await ip(['link', 'set', 'lo', 'up']);
  const links = await ipJson<{ ifname: string }>(['link', 'show']);
  if (!links.some((l) => l.ifname === bridgeName)) await ip(['link', 'add', bridgeName, 'type', 'bridge']);
  const addresses = await ipJson<AddressFact>(['addr', 'show', 'dev', bridgeName]);
  const present = new Set((addresses[0]?.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => a.local));
  // The node address first: it becomes the primary, the source of probes and proxied connections.
  for (const address of [subnet.nodeAddress, subnet.apiAddress]) {
    if (!present.has(address)) await ip(['addr', 'add', `${address}/24`, 'dev', bridgeName]);
  }
  await ip(['link', 'set', bridgeName, 'up']);
  await ip(['route', 'replace', 'local', `${subnet.servicePrefix}.0/24`, 'dev', 'lo']);
}
