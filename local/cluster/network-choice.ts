/**
 * Which network `keelson local up` runs pods on with `--network auto` (the default): network
 * namespaces when this process can make them (root, iproute2, util-linux and nftables present, and
 * `unshare --net` permitted), so pods can be cut off the network as on a real cluster; loopback
 * addresses otherwise. Host tools reach a namespace stack only through its 127.0.0.1 forwarders
 * (kubectl, psql, and `keelson ctl` through the member proxy named in DIR/kubeconfig).
 */
import { runTool } from '../node/netns/commands.js';
import { namespaceToolsMissing } from '../node/netns/isolation.js';
import { parseNetworkMode, type NetworkMode } from '../node/netns/node-mode.js';

export interface NetworkChoice {
  mode: NetworkMode;
  /** Why this mode, for the progress output. */
  reason: string;
}

/** Why namespace mode is unavailable here; undefined when it is available. */
export async function namespaceModeUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'not running as root';
  const missing = await namespaceToolsMissing();
  if (missing.length > 0) return `${missing.join(', ')} not installed`;
  const denied = await runTool(['unshare', '--net', '--', 'true']).then(
    () => undefined,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  return denied ? `cannot make a network namespace (${denied})` : undefined;
}

/** `auto` picks namespace mode when available, else loopback; other values are taken as given. */
export async function chooseNetwork(flag: string): Promise<NetworkChoice> {
  if (flag !== 'auto') return { mode: parseNetworkMode(flag), reason: `--network ${flag}` };
  const unavailable = await namespaceModeUnavailable();
  return unavailable
    ? { mode: 'loopback', reason: `pods on loopback addresses (${unavailable}; network namespaces need root, ip, nsenter and nft)` }
    : { mode: 'namespace', reason: 'pods in network namespaces, reached from here through 127.0.0.1 forwarders (pod addresses only inside)' };
}

/** The child's argv with the chosen mode stated, so it does not choose again. */
export function withNetwork(argv: string[], mode: NetworkMode): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--network') i += 1;
    else if (!argv[i]!.startsWith('--network=')) kept.push(argv[i]!);
  }
  return [...kept, '--network', mode];
}
