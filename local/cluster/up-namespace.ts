/**
 * `keelson local up --network namespace`: the stack runs in a child inside a fresh isolated
 * network namespace (ADR 0354); this process stays in the host's namespace and only serves
 * forwarders on 127.0.0.1 (the API server, the member proxy for keelson ctl, demo-rw, demo-ro,
 * the pooler), each piped to a unix socket the child serves inside. The host never sends to the
 * private pod or node addresses. `--network auto` picks it as root (local/cluster/network-choice.ts).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { join, resolve } from 'node:path';
import { yaml } from '../../lib/yaml.js';
import { memberProxyExtension } from '../../lib/kube/kubeconfig-extensions.js';
import { serveLoopbackToUnix, serveUnixToTcp } from '../node/netns/forward.js';
import { serveMemberProxy } from '../node/netns/member-proxy.js';
import type { NodeSubnet } from '../node/netns/subnet.js';
import { spawnIsolated } from '../node/netns/isolated-run.js';

export const forwardNames = ['api', 'members', 'rw', 'ro', 'pooler'] as const;
/** The demo's Services the host reaches through a forwarder each. */
export type ServiceForward = Exclude<(typeof forwardNames)[number], 'api' | 'members'>;
export type ForwardPorts = Record<(typeof forwardNames)[number], number>;
const portsVariable = 'KEELSON_LOCAL_FORWARD_PORTS';

export function forwardSocket(dir: string, name: (typeof forwardNames)[number]): string {
  return join(resolve(dir), 'forward', `${name}.sock`);
}

/** The kubeconfig for the host: the admin's, with the server at the API forwarder (where loopback mode has its one). */
export function hostKubeconfigPath(dir: string): string {
  return join(resolve(dir), 'kubeconfig');
}

/** The admin's kubeconfig with the API server's own address, usable only inside the node namespace. */
export function nodeNamespaceKubeconfigPath(dir: string): string {
  return join(resolve(dir), 'apiserver', 'node-namespace.kubeconfig');
}

/** Inside the isolated child: the forwarder ports the host side chose, if any. */
export function forwardPortsFromEnv(): ForwardPorts | undefined {
  const raw = process.env[portsVariable];
  if (!raw) return undefined;
  const parsed = JSON.parse(raw) as Partial<ForwardPorts>;
  if (!forwardNames.every((name) => Number.isInteger(parsed[name]))) throw new Error(`${portsVariable} must name the ${forwardNames.join(', ')} ports`);
  return parsed as ForwardPorts;
}

/** The host side's pid, so that `local down` waits for the forwarders to stop too. */
export function forwarderPidFile(dir: string): string {
  return join(resolve(dir), 'forward', 'pid');
}

/** Host side: forwarders first, then the isolated child; exits with the child. */
export async function runLocalUpIsolated(dir: string, childArgv: string[]): Promise<void> {
  // The stack's folder first, traversable: a recursive mkdir gives every folder it makes the
  // mode asked for, and the pods' non-root account must reach the node folder below it.
  mkdirSync(resolve(dir), { recursive: true, mode: 0o755 });
  mkdirSync(join(resolve(dir), 'forward'), { recursive: true, mode: 0o700 });
  writeFileSync(forwarderPidFile(dir), `${process.pid}\n`);
  const servers: Server[] = [];
  const ports = {} as ForwardPorts;
  for (const name of forwardNames) {
    const forward = await serveLoopbackToUnix(forwardSocket(dir, name));
    servers.push(forward.server);
    ports[name] = forward.port;
  }
  const child = spawnIsolated([process.execPath, ...process.execArgv, ...childArgv], {
    env: { ...process.env, [portsVariable]: JSON.stringify(ports) },
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  const code = await new Promise<number>((resolveExit) => {
    child.once('error', () => resolveExit(1));
    child.once('exit', (exitCode) => resolveExit(exitCode ?? 1));
  });
  for (const server of servers) server.close();
  rmSync(forwarderPidFile(dir), { force: true });
  process.exit(code);
}

/**
 * The host's kubeconfig: the admin's, with the server at the API forwarder and the member proxy
 * forwarder named in the cluster's `keelson.io/member-proxy` extension, which `keelson ctl` follows.
 */
export function hostKubeconfigText(adminKubeconfig: string, ports: Pick<ForwardPorts, 'api' | 'members'>): string {
  const doc = yaml().parse(adminKubeconfig) as { clusters?: Array<{ cluster?: Record<string, unknown> }> };
  for (const entry of doc.clusters ?? []) {
    entry.cluster = {
      ...entry.cluster,
      server: `https://127.0.0.1:${ports.api}`,
      extensions: [{ name: memberProxyExtension, extension: { url: `http://127.0.0.1:${ports.members}` } }],
    };
  }
  return yaml().stringify(doc);
}

/** Child side, once the API server runs: the host kubeconfig, the API socket and the member proxy socket. */
export async function serveApiForward(dir: string, ports: ForwardPorts, apiServerUrl: string, adminKubeconfig: string, subnet: NodeSubnet): Promise<Server[]> {
  const url = new URL(apiServerUrl);
  rmSync(hostKubeconfigPath(dir), { force: true });
  writeFileSync(hostKubeconfigPath(dir), hostKubeconfigText(readFileSync(adminKubeconfig, 'utf8'), ports), { mode: 0o600 });
  return Promise.all([
    serveUnixToTcp(forwardSocket(dir, 'api'), { host: url.hostname, port: Number(url.port) }),
    serveMemberProxy(forwardSocket(dir, 'members'), subnet),
  ]);
}

/** Child side, once the Services exist: demo-rw, demo-ro and demo-pooler-rw sockets to their cluster IPs. */
export async function serveServiceForwards(dir: string, clusterIPs: Record<ServiceForward, string>, port: number): Promise<Server[]> {
  return Promise.all(Object.entries(clusterIPs).map(([name, host]) => serveUnixToTcp(forwardSocket(dir, name as ServiceForward), { host, port })));
}
