/**
 * One network namespace per pod: `/run/netns/keelson-<node>-<octet>` with lo and `eth0`, the pod
 * end of a veth whose node end joins the bridge. The pod gets its address on the /24, a route to
 * the Service /24 through the node (where the service proxy listens) and no default route: the
 * bridge reaches the node, the API server, the Services and the other pods, and nothing else exists.
 * The veth is deleted by name before its namespace: `ip netns del` only unmounts the namespace, and
 * the kernel removes its veth later (asynchronously, and never while a process is still inside), so
 * a pod recreated at once on the same address would find the node end's name still taken. The
 * pod's MAC follows from its address, so neighbour caches stay right across such a replacement.
 */
import { readdirSync, readlinkSync, statSync } from 'node:fs';
import { ip, ipJson, NetworkCommandError } from './commands.js';
import { bridgeName, namespacePath, podMacAddress, podNamespaceName, podNamespacePrefix, vethName, type NodeSubnet } from './subnet.js';

export interface PodNamespace {
  name: string;
  path: string;
  podIP: string;
}

/** The agent's view of pod networking: attach before the first container, detach after the last. */
export interface PodNetworkProvider {
  attach(podIP: string): Promise<PodNamespace>;
  detach(podIP: string): Promise<void>;
}

async function namespaceNames(): Promise<string[]> {
  return (await ipJson<{ name: string }>(['netns', 'list'])).map((n) => n.name);
}

/** Deletes a link of the node namespace by name if it exists (deleting one end of a veth deletes both). */
async function deleteLinkIfPresent(name: string): Promise<void> {
  await ip(['link', 'del', name]).catch((err: unknown) => {
    // Already gone (never made, or its namespace's cleanup took it): nothing to do.
    if (!(err instanceof NetworkCommandError && /Cannot find device/.test(err.stderr))) throw err;
  });
}

/** Whether any process lives in the named namespace (compared by the namespace's inode). */
function inhabited(name: string): boolean {
  let inode: number;
  try {
    inode = statSync(namespacePath(name)).ino;
  } catch {
    return false;
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/net`) === `net:[${inode}]`) return true;
    } catch {
      // exited, or not ours to read
    }
  }
  return false;
}

export class PodNetworks implements PodNetworkProvider {
  constructor(
    private readonly node: string,
    readonly subnet: NodeSubnet,
  ) {}

  async attach(podIP: string): Promise<PodNamespace> {
    const name = podNamespaceName(this.node, podIP);
    const veth = vethName(this.node, podIP);
    await deleteLinkIfPresent(veth);
    if ((await namespaceNames()).includes(name)) await ip(['netns', 'del', name]);
    await ip(['netns', 'add', name]);
    try {
      await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'address', podMacAddress(podIP), 'netns', name]);
      await ip(['link', 'set', veth, 'master', bridgeName, 'up']);
      await ip(['link', 'set', 'lo', 'up'], name);
      await ip(['addr', 'add', `${podIP}/24`, 'dev', 'eth0'], name);
      await ip(['link', 'set', 'eth0', 'up'], name);
      await ip(['route', 'add', `${this.subnet.servicePrefix}.0/24`, 'via', this.subnet.nodeAddress, 'dev', 'eth0'], name);
    } catch (err) {
      await deleteLinkIfPresent(veth).catch(() => undefined);
      await ip(['netns', 'del', name]).catch(() => undefined);
      throw err;
    }
    return { name, path: namespacePath(name), podIP };
  }

  async detach(podIP: string): Promise<void> {
    const name = podNamespaceName(this.node, podIP);
    await deleteLinkIfPresent(vethName(this.node, podIP));
    if ((await namespaceNames()).includes(name)) await ip(['netns', 'del', name]);
  }

  /**
   * Removes what a crashed run left: every namespace of this node (same id), and any project
   * namespace that lost its veth (its node namespace is gone) and has no process left in it.
   */
  async removeLeftovers(): Promise<string[]> {
    const removed: string[] = [];
    for (const name of await namespaceNames()) {
      if (!name.startsWith(podNamespacePrefix)) continue;
      let orphan = name.startsWith(`${podNamespacePrefix}${this.node}-`);
      if (!orphan) {
        const links = await ipJson<{ ifname: string }>(['link', 'show'], name).catch(() => []);
        orphan = links.every((l) => l.ifname === 'lo') && !inhabited(name);
      }
      if (!orphan) continue;
      await ip(['netns', 'del', name]).catch(() => undefined);
      removed.push(name);
    }
    return removed;
  }
}
