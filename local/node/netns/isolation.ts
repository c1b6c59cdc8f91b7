/**
 * The guard of namespace mode: the namespace the stack runs in must have no way out of the
 * machine. It must not be the host's namespace, must have no default route and no route through
 * a gateway, and may hold only lo, the node bridge and veths whose other end is in one of this
 * project's pod namespaces. Pod addresses are private (RFC 1918): from any namespace with a route
 * out they would leave the machine, so the node agent refuses to start unless this check passes.
 */
import { readlinkSync, statSync } from 'node:fs';
import { hostNetworkNamespace } from '../../../lib/host-network.js';
import { ipJson, runTool } from './commands.js';
import { bridgeName, namespacePath, podNamespacePrefix } from './subnet.js';

export interface RouteFact {
  dst?: string;
  gateway?: string;
  via?: unknown;
  dev?: string;
  table?: string;
}

export interface LinkFact {
  ifname: string;
  link_type?: string;
  link_netnsid?: number;
  linkinfo?: { info_kind?: string };
}

export interface NetworkFacts {
  /** This process's network namespace is the one of pid 1 (the host's). */
  isHostNamespace: boolean;
  routes: RouteFact[];
  links: LinkFact[];
  /** nsid (as this namespace numbers its peers) → name under /run/netns, for named peers. */
  peerNames: Map<number, string>;
  /** Names of peer namespaces that are the host's namespace under another name. */
  hostAliases: Set<string>;
}

/** Why this namespace could reach beyond the machine; empty when it is isolated. */
export function isolationProblems(facts: NetworkFacts): string[] {
  const problems: string[] = [];
  if (facts.isHostNamespace) problems.push("this is the host's network namespace");
  for (const route of facts.routes) {
    if (route.dst === 'default') problems.push(`default route${route.dev ? ` on ${route.dev}` : ''}`);
    else if (route.gateway !== undefined || route.via !== undefined) problems.push(`route to ${route.dst} through a gateway`);
  }
  for (const link of facts.links) {
    const kind = link.linkinfo?.info_kind;
    if (link.link_type === 'loopback' && link.ifname === 'lo') continue;
    if (kind === 'bridge' && link.ifname === bridgeName) continue;
    if (kind === 'veth' && link.ifname.startsWith('kv')) {
      if (link.link_netnsid === undefined) continue; // both ends here
      const peer = facts.peerNames.get(link.link_netnsid);
      if (peer?.startsWith(podNamespacePrefix) && !facts.hostAliases.has(peer)) continue;
      problems.push(`veth ${link.ifname} leads to ${peer ? `namespace ${peer}` : 'an unnamed namespace'}, not a pod's`);
      continue;
    }
    problems.push(`link ${link.ifname} (${kind ?? link.link_type ?? 'unknown'}) is neither lo, ${bridgeName} nor a pod veth`);
  }
  return problems;
}

function namespaceInode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** Reads routes (every table, both families), links and peer namespaces of this process's namespace. */
export async function readNetworkFacts(): Promise<NetworkFacts> {
  const host = hostNetworkNamespace();
  const hostInode = host ? Number(/\[(\d+)\]/.exec(host)?.[1]) : undefined;
  const own = readlinkSync('/proc/self/ns/net');
  const [v4, v6, links, ids] = await Promise.all([
    ipJson<RouteFact>(['-4', 'route', 'show', 'table', 'all']),
    ipJson<RouteFact>(['-6', 'route', 'show', 'table', 'all']),
    ipJson<LinkFact>(['-d', 'link', 'show']),
    ipJson<{ nsid: number; name?: string }>(['netns', 'list-id']),
  ]);
  const peerNames = new Map<number, string>();
  const hostAliases = new Set<string>();
  for (const id of ids) {
    if (!id.name) continue;
    peerNames.set(id.nsid, id.name);
    if (hostInode !== undefined && namespaceInode(namespacePath(id.name)) === hostInode) hostAliases.add(id.name);
  }
  // Unknown host namespace: the route and link checks below still decide.
  return { isHostNamespace: host === own, routes: [...v4, ...v6], links, peerNames, hostAliases };
}

export class NotIsolatedError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `refusing namespace mode: this network namespace has a way out of the machine (${problems.join('; ')}); run the stack inside an isolated namespace (e.g. \`unshare --net\`)`,
    );
  }
}

/** Throws NotIsolatedError unless this process's network namespace is isolated. */
export async function assertIsolated(): Promise<void> {
  const problems = isolationProblems(await readNetworkFacts());
  if (problems.length > 0) throw new NotIsolatedError(problems);
}

/** Whether `ip`, `nsenter` and `nft` can be run (namespace mode needs all three, and root). */
export async function namespaceToolsMissing(): Promise<string[]> {
  const missing: string[] = [];
  for (const argv of [
    ['ip', '-V'],
    ['nsenter', '--version'],
    ['nft', '--version'],
  ]) {
    await runTool(argv).catch(() => missing.push(argv[0]));
  }
  return missing;
}
