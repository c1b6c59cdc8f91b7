/**
 * Cluster IPs come from a range inside 127.0.0.0/8 so the local service proxy can listen on them.
 * The default is 127.1.0.0/16; a local stack passes its own /24 (the node's pod block) so that two
 * stacks side by side never hand out the same address. A stack with pods in network namespaces
 * passes a private /24 that exists only inside its isolated node namespace (ADR 0355). Addresses
 * are taken from the top of the range downwards, the opposite end from where pods are numbered.
 */
import { isJsonObject, type KubeObject } from '../types.js';

export const defaultServiceCidr = '127.1.0.0/16';

interface Range {
  /** First and last usable host address, as 32-bit numbers. */
  low: number;
  high: number;
}

const toNumber = (ip: string): number => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const toAddress = (n: number): string => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

/** Loopback (127/8) and private (RFC 1918) blocks, each as [first address, prefix length]. */
const allowedBlocks: Array<[number, number]> = [
  [toNumber('127.0.0.0'), 8],
  [toNumber('10.0.0.0'), 8],
  [toNumber('172.16.0.0'), 12],
  [toNumber('192.168.0.0'), 16],
];

const insideBlock = (network: number, bits: number): boolean =>
  allowedBlocks.some(([block, blockBits]) => bits >= blockBits && Math.floor(network / 2 ** (32 - blockBits)) === Math.floor(block / 2 ** (32 - blockBits)));

/** Parses "A.B.C.D/N" (N from 8 to 30, inside 127.0.0.0/8 or a private range); throws a clear error otherwise. */
export function parseServiceCidr(cidr: string): Range {
  const match = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  const bits = match ? Number(match[2]) : Number.NaN;
  const size = 2 ** (32 - bits);
  const network = match ? Math.floor(toNumber(match[1]) / size) * size : Number.NaN;
  if (!match || match[1].split('.').some((o) => Number(o) > 255) || bits < 8 || bits > 30 || !insideBlock(network, bits)) {
    throw new Error(
      `invalid service range "${cidr}": expected A.B.C.D/N with N from 8 to 30, inside 127.0.0.0/8 or a private range (10/8, 172.16/12, 192.168/16)`,
    );
  }
  return { low: network + 1, high: network + size - 2 };
}

/** The service range of a local stack whose pods use the /24 `prefix` (e.g. "127.0.41"). */
export function serviceCidrOfPrefix(prefix: string): string {
  return `${prefix}.0/24`;
}

export class ServiceIpAllocator {
  private readonly range: Range;
  private next: number;

  constructor(cidr = defaultServiceCidr) {
    this.range = parseServiceCidr(cidr);
    this.next = this.range.high;
  }

  /** Fills spec.clusterIP(s) for a new Service (headless and ExternalName Services get none). */
  allocate(o: KubeObject, used: Set<unknown>): void {
    const spec = isJsonObject(o.spec) ? o.spec : {};
    if (spec.type === 'ExternalName' || spec.clusterIP === 'None') {
      if (spec.clusterIP === 'None') spec.clusterIPs = ['None'];
      return;
    }
    if (!spec.clusterIP) spec.clusterIP = this.take(used);
    spec.clusterIPs = [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }

  /** The next free address going down (wrapping at the bottom); a cursor, so freed ones rest a while. */
  private take(used: Set<unknown>): string {
    const { low, high } = this.range;
    for (let tries = 0; tries <= high - low; tries += 1) {
      const ip = toAddress(this.next);
      this.next = this.next <= low ? high : this.next - 1;
      if (!used.has(ip)) return ip;
    }
    throw new Error(`service range ${toAddress(low)}-${toAddress(high)} is exhausted`);
  }
}
