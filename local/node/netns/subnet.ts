/**
 * The address plan of a node namespace: one private /24 that exists only inside it. `.1` is the
 * node's own address on the bridge (probes and the service proxy come from it), `.254` is where
 * the API server listens, pods take `.2` to `.199`. Because every node namespace is a world of its
 * own, two stacks may use the same /24 without meeting. Names of pod namespaces and veths carry
 * the node's id so leftovers of a crashed node can be told apart from another node's pods.
 */
export interface NodeSubnet {
  /** First three octets, e.g. `10.213.0`. */
  prefix: string;
  nodeAddress: string;
  apiAddress: string;
  firstPod: number;
  lastPod: number;
  /** First three octets of the Service /24, e.g. `10.213.1`. */
  servicePrefix: string;
}

export const defaultNodeSubnetPrefix = '10.213.0';
/** Every pod namespace of every node starts with this. */
export const podNamespacePrefix = 'keelson-';
export const bridgeName = 'keelson0';

/** Private ranges (RFC 1918): from the host's namespace these would leave the machine. */
export function isPrivatePrefix(prefix: string): boolean {
  const octets = prefix.split('.').map(Number);
  if (octets.length !== 3 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return false;
  const [a, b] = octets;
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

export function nodeSubnet(prefix = defaultNodeSubnetPrefix): NodeSubnet {
  if (!isPrivatePrefix(prefix)) throw new Error(`invalid pod network "${prefix}": expected A.B.C inside 10/8, 172.16/12 or 192.168/16`);
  const [a, b, c] = prefix.split('.').map(Number);
  // Same /16 as the pods, so it is private whenever theirs is.
  const servicePrefix = `${a}.${b}.${c ^ 1}`;
  return { prefix, nodeAddress: `${prefix}.1`, apiAddress: `${prefix}.254`, firstPod: 2, lastPod: 199, servicePrefix };
}

/** The Service range of a node subnet, for the API server's allocator. */
export function serviceCidrOfSubnet(subnet: NodeSubnet): string {
  return `${subnet.servicePrefix}.0/24`;
}

/** Short node id (from the node's marker hash): letters and digits only, at most 6 characters. */
export function nodeId(markerPrefix: string): string {
  const id = markerPrefix
    .replace(/[^0-9a-z]/gi, '')
    .slice(0, 6)
    .toLowerCase();
  if (!id) throw new Error('node id is empty');
  return id;
}

/** `keelson-<node>-<host octet>`: the pod's namespace under /run/netns. */
export function podNamespaceName(node: string, podIP: string): string {
  return `${podNamespacePrefix}${node}-${podIP.split('.').pop()}`;
}

/** `kv<node>-<host octet>` (at most 12 characters, within the 15 Linux allows): the node's end of the veth. */
export function vethName(node: string, podIP: string): string {
  return `kv${node}-${podIP.split('.').pop()}`;
}

/**
 * The MAC of a pod's `eth0`, derived from its address (`0a:58:` and the four octets, locally
 * administered, as the CNI bridge plugin did): a pod recreated on the same address answers with
 * the same MAC, so neighbour caches of the node and of peers that still hold the old entry stay
 * right instead of sending to a vanished interface for seconds.
 */
export function podMacAddress(podIP: string): string {
  return ['0a', '58', ...podIP.split('.').map((o) => Number(o).toString(16).padStart(2, '0'))].join(':');
}

export function namespacePath(name: string): string {
  return `/run/netns/${name}`;
}
