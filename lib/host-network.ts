import { readlinkSync } from 'node:fs';

/**
 * Where this process sends from: whether an address is a loopback one, and whether this process
 * is in the host's network namespace. From the host's namespace a private address that is not on
 * this machine leaves it, so tools that reach local stacks check both before they connect.
 */

/** 127/8, ::1 and `localhost`: addresses that never leave the machine from any namespace. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === '::1' || bare === 'localhost';
}

/**
 * The host's network namespace as `net:[inode]`: pid 1's when readable (it may not be, even to
 * root, when pid 1 holds capabilities we lack), else the one a launcher recorded when it
 * isolated us (KEELSON_HOST_NETNS).
 */
export function hostNetworkNamespace(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return readlinkSync('/proc/1/ns/net');
  } catch {
    return env.KEELSON_HOST_NETNS || undefined;
  }
}

/** Whether this process runs in the host's network namespace; true when that cannot be told (the safe answer). */
export function inHostNetworkNamespace(env: NodeJS.ProcessEnv = process.env): boolean {
  const host = hostNetworkNamespace(env);
  if (!host) return true;
  try {
    return readlinkSync('/proc/self/ns/net') === host;
  } catch {
    return true;
  }
}
