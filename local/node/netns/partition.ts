/**
 * Network partitions for tests, applied inside a pod's namespace with nftables so packets are
 * dropped (the peer sees timeouts, as on a real partition) rather than refused. One table per pod
 * namespace holds the current cut; a new cut replaces it atomically, heal deletes it.
 */
import { runTool } from './commands.js';
import type { NodeSubnet } from './subnet.js';

const table = 'keelson_partition';

export type Cut = { kind: 'addresses'; addresses: string[] } | { kind: 'everything' };

/** The nft script for a cut: drop both directions to the given addresses, or everything on eth0. */
export function cutRules(cut: Cut): string {
  const [output, input] =
    cut.kind === 'everything'
      ? ['oifname "eth0" drop', 'iifname "eth0" drop']
      : cut.addresses.length === 0
        ? ['', '']
        : [`ip daddr { ${cut.addresses.join(', ')} } drop`, `ip saddr { ${cut.addresses.join(', ')} } drop`];
  // Declaring the table first makes the delete succeed when there is none: the swap is one transaction.
  return [
    `table inet ${table}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    `  chain output { type filter hook output priority 0; policy accept;${output ? ` ${output};` : ''} }`,
    `  chain input { type filter hook input priority 0; policy accept;${input ? ` ${input};` : ''} }`,
    '}',
    '',
  ].join('\n');
}

function nftIn(namespacePath: string, script: string): Promise<string> {
  return runTool(['nsenter', `--net=${namespacePath}`, 'nft', '-f', '-'], script);
}

export function applyCut(namespacePath: string, cut: Cut): Promise<string> {
  for (const address of cut.kind === 'addresses' ? cut.addresses : []) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) throw new Error(`not an IPv4 address: "${address}"`);
  }
  return nftIn(namespacePath, cutRules(cut));
}

/** The pod can no longer reach the API server (the node and other pods still reach it). */
export function cutFromApiServer(namespacePath: string, subnet: NodeSubnet): Promise<string> {
  return applyCut(namespacePath, { kind: 'addresses', addresses: [subnet.apiAddress] });
}

/** The pod can no longer reach the given peers, nor they it. */
export function cutFromPeers(namespacePath: string, peers: string[]): Promise<string> {
  return applyCut(namespacePath, { kind: 'addresses', addresses: peers });
}

/** Nothing but the pod's own loopback: API server, peers, probes and clients all time out. */
export function cutFromEverything(namespacePath: string): Promise<string> {
  return applyCut(namespacePath, { kind: 'everything' });
}

export function heal(namespacePath: string): Promise<string> {
  return nftIn(namespacePath, `table inet ${table}\ndelete table inet ${table}\n`);
}
