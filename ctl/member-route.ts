import { createServer, type Server, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { inHostNetworkNamespace, isLoopbackHost } from '../lib/host-network.js';
import { splice } from '../lib/splice.js';
import { loadKubeConfig } from '../lib/kube/client.js';
import { clusterExtension, kubeconfigFiles, memberProxyExtension } from '../lib/kube/kubeconfig-extensions.js';
import { UnreachableError } from './client-errors.js';

/**
 * How ctl reaches members. Directly, unless the kubeconfig's cluster names a member proxy (what
 * `keelson local up --network namespace` writes: pod addresses exist only inside the stack's node
 * namespace, and a 127.0.0.1 forwarder tunnels to them with HTTP CONNECT). Without a proxy, a
 * cluster whose API server is on this machine's loopback while its members are not is a local
 * stack in network namespaces: sending to those addresses from the host's namespace would leave
 * the machine, so ctl refuses before it connects.
 */

export interface MemberRoute {
  /** Every member connection is tunnelled through this CONNECT proxy (on loopback). */
  proxy?: { host: string; port: number };
  /** Set when direct connections to non-loopback addresses are refused: why. */
  refuseNonLoopback?: string;
}

/** A member address ctl will not send to from here. */
export class MemberAddressRefused extends UnreachableError {}

export interface RouteFacts {
  /** The member proxy extension's value, as found in the kubeconfig. */
  proxy?: unknown;
  /** The API server URL of the kubeconfig's current cluster. */
  apiServer?: string;
  inHostNamespace: boolean;
}

/** Pure: the route the facts call for. */
export function decideRoute(facts: RouteFacts): MemberRoute {
  if (facts.proxy !== undefined) {
    const raw = (facts.proxy as { url?: unknown } | null)?.url;
    let url: URL | undefined;
    try {
      url = typeof raw === 'string' ? new URL(raw) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'http:' || !url.port || !isLoopbackHost(url.hostname)) {
      throw new UnreachableError(
        `the kubeconfig's ${memberProxyExtension} extension must be { url: http://127.x.y.z:PORT }, got ${JSON.stringify(facts.proxy)}`,
      );
    }
    return { proxy: { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) } };
  }
  const apiHost = facts.apiServer ? safeHostname(facts.apiServer) : undefined;
  if (facts.inHostNamespace && apiHost && isLoopbackHost(apiHost)) {
    return {
      refuseNonLoopback:
        `the cluster's API server is on this machine (${apiHost}) but the kubeconfig names no member proxy: its pod addresses exist only inside the stack's node namespace, ` +
        "and from the host's namespace they would leave the machine. Use the kubeconfig `keelson local up` wrote (DIR/kubeconfig tunnels member calls through a 127.0.0.1 forwarder), " +
        'or run ctl inside the node namespace (nsenter --net=/proc/$(cat DIR/pid)/ns/net)',
    };
  }
  return {};
}

function safeHostname(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** The route for the kubeconfig ctl uses; direct (no checks) when there is no kubeconfig (--url only). */
export function resolveMemberRoute(kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env): MemberRoute {
  let cluster: { name: string; server: string } | null | undefined;
  try {
    cluster = loadKubeConfig({ kubeconfig, env }).getCurrentCluster();
  } catch {
    return {};
  }
  if (!cluster) return {};
  const proxy = clusterExtension(kubeconfigFiles({ kubeconfig, env }), cluster.name, memberProxyExtension);
  return decideRoute({ proxy, apiServer: cluster.server, inHostNamespace: inHostNetworkNamespace(env) });
}

/** Throws MemberAddressRefused when a direct connection to `host` is not allowed on this route. */
export function checkDirect(route: MemberRoute | undefined, host: string): void {
  if (route?.refuseNonLoopback && !isLoopbackHost(host))
    throw new MemberAddressRefused(`refusing to send to member address ${host}: ${route.refuseNonLoopback}`);
}

/** A socket to host:port through the route's CONNECT proxy. */
export function openTunnel(proxy: NonNullable<MemberRoute['proxy']>, host: string, port: number, timeoutMs: number): Promise<Socket> {
  const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: proxy.host, port: proxy.port, method: 'CONNECT', path: target, timeout: timeoutMs, headers: { Host: target } });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(
        new UnreachableError(
          `cannot reach ${target} through the member proxy ${proxy.host}:${proxy.port}: HTTP ${res.statusCode} ${res.statusMessage ?? ''}`.trim(),
        ),
      );
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', (error) => reject(new UnreachableError(`cannot reach the member proxy ${proxy.host}:${proxy.port}: ${error.message}`)));
    req.end();
  });
}

/**
 * For clients that only take a host and port (PostgreSQL): a 127.0.0.1 listener whose connections
 * are tunnelled to host:port. Direct routes answer host:port itself (after the check).
 */
export async function memberEndpoint(
  route: MemberRoute | undefined,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<{ host: string; port: number; close: () => void }> {
  if (!route?.proxy) {
    checkDirect(route, host);
    return { host, port, close: () => undefined };
  }
  const proxy = route.proxy;
  const server: Server = createServer((client) => {
    openTunnel(proxy, host, port, timeoutMs).then(
      (upstream) => splice(client, upstream),
      () => client.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return { host: '127.0.0.1', port: typeof address === 'object' && address ? address.port : 0, close: () => server.close() };
}
